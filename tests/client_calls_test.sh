#!/bin/sh
# Fails on a call into a client library (hiredis, libpq, ...) that bypasses
# its table of calls (src/platform/client_library.h): an object of
# libipclock.a that imports one of the library's symbols. In the dlopen
# build no object may (they are found with dlsym() by name); in the link
# build only the tables' own files, src/platform/*_calls.cc, may.
#
#   client_calls_test.sh LIBIPCLOCK.A dlopen|link CLIENT.SO...
#
# The symbols a client library exports are read from the shared library the
# build found (nm -D), so a new call is caught whatever its name.
set -eu
archive=$1
mode=$2
shift 2
nm=${NM:-nm}
if [ $# -eq 0 ]; then
  echo "no client library in this build: nothing to check"
  exit 77
fi
exports=$(mktemp)
imports=$(mktemp)
trap 'rm -f "$exports" "$imports"' EXIT
for so in "$@"; do
  "$nm" -D --defined-only "$so" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }'
done | sort -u >"$exports"
# "archive:member: U symbol" (or "archive:member:0000 U symbol" with some nm).
"$nm" -A -u "$archive" | awk '{ member = $1; sub(/:[^:]*$/, "", member); sub(/.*:/, "", member);
                              sym = $NF; sub(/@.*/, "", sym); print member, sym }' |
  sort -u >"$imports"
bad=$(awk 'NR == FNR { exported[$1] = 1; next } ($2 in exported) { print }' "$exports" "$imports" |
  while read -r member sym; do
    case "$mode:$member" in
      link:platform_*_calls.cc.o) ;;
      *) echo "$member calls $sym directly, not through its table (src/platform/*_calls.h)" ;;
    esac
  done)
checked=$(wc -l <"$exports")
if [ -n "$bad" ]; then
  echo "$bad"
  exit 1
fi
echo "no object of $archive calls one of the $checked symbols of $# client libraries directly"
