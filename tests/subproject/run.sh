#!/bin/sh
# Builds the Meson project beside this script, with this ipclock tree as its
# subproject (a symlink in a temp dir), and checks that ipclock behaves as a
# subproject should: it builds its library and nothing else (no CLI, tests,
# torture, bench or examples), adds no test to the parent's `meson test`,
# installs nothing, and exports include/ only (main.c fails to compile if
# src/ or ipclock's build root is on its include path). Then runs the
# parent's program on a flock store.
#
# Environment: IPCLOCK_SOURCE_ROOT (set by meson test), CC, CXX, SANITIZE.
set -eu

if [ -n "${IPCLOCK_CROSS:-}" ]; then
  echo "skipped in a cross build ($IPCLOCK_CROSS): the Meson subproject consumer is built natively"
  exit 77
fi

src=${IPCLOCK_SOURCE_ROOT:?}
if [ "${SANITIZE:-none}" != none ]; then
  # The check is of the build's structure, which a sanitizer does not change;
  # the plain pass of the suite runs it.
  echo "skipped in a sanitizer build (b_sanitize=$SANITIZE)"
  exit 77
fi
tmp=$(mktemp -d /tmp/ipclock-subproject-XXXXXX)
# A signal ends the script (meson test's timeout sends TERM): the temp dir
# goes with it, and nothing after reads from it.
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$tmp/parent/subprojects"
cp "$src/tests/subproject/meson.build" "$src/tests/subproject/main.c" "$tmp/parent/"
ln -s "$src" "$tmp/parent/subprojects/ipclock"

# The lightest build of the library: no optimization nor debug info, and
# without the stores that need a client library (what is checked here is
# the build's shape, which they do not change; the main build has them).
# Behind ccache where it is installed, as Meson does for the compilers it
# finds itself; CC and CXX from meson test are the main build's, ccache
# included. Paths in the temp dir are taken relative to it, so that the
# next run, in another temp dir, hits the cache too (CCACHE_DIR and the
# other settings come from the environment).
cache=
if command -v ccache >/dev/null 2>&1; then cache="ccache "; fi
export CCACHE_BASEDIR="$tmp"
no_clients=
for f in redis postgres mysql sqlite memcached zookeeper etcd; do
  no_clients="$no_clients -Dipclock:$f=disabled"
done
# shellcheck disable=SC2086 # one option a word
CC=${CC:-${cache}cc} CXX=${CXX:-${cache}c++} meson setup "$tmp/build" "$tmp/parent" \
  --buildtype=plain --wrap-mode=nodownload --werror $no_clients >"$tmp/setup.log" 2>&1 || {
  cat "$tmp/setup.log" >&2
  exit 1
}

fail=0
# ipclock's targets are its library and the library of each of its layers
# (src/meson.build), which the library holds whole.
targets=$(meson introspect "$tmp/build" --targets |
          python3 -c 'import json,sys; print(" ".join(sorted(
              "ipclock_LAYER" if t["name"].startswith("ipclock_") and t["type"] == "static library"
              else t["name"] for t in json.load(sys.stdin))))' | tr ' ' '\n' | uniq | tr '\n' ' ')
echo "targets: $targets"
[ "$targets" = "ipclock ipclock_LAYER parent " ] ||
  { echo "expected the targets 'ipclock', its layers' and 'parent'" >&2; fail=1; }

tests=$(meson introspect "$tmp/build" --tests |
        python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)))')
echo "tests: ${tests:-none}"
[ -z "$tests" ] || { echo "ipclock added tests to the parent" >&2; fail=1; }

installed=$(meson introspect "$tmp/build" --installed |
            python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin).values()))')
echo "installed: ${installed:-nothing}"
[ -z "$installed" ] || { echo "ipclock installs files as a subproject" >&2; fail=1; }

ninja -C "$tmp/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }
built=$(find "$tmp/build" -type f -perm -u+x -name '*' ! -name '*.so' ! -path '*/meson-*' | sed "s|$tmp/build/||" | sort | tr '\n' ' ')
echo "executables built: $built"
[ "$built" = "parent " ] || { echo "expected only the parent's program" >&2; fail=1; }

mkdir "$tmp/locks"
"$tmp/build/parent" "flock://$tmp/locks?removeipc=ignore" || fail=1
[ "$fail" -eq 0 ] && echo "ok"
exit "$fail"
