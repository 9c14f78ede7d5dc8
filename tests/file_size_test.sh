#!/bin/sh
# Fails naming each file git tracks under src/, include/, tools/ and tests/
# that has more than 600 lines: a file that long has more than one job,
# and is split into files that have one each.
#
# Not counted, being data rather than code someone reads:
#   * tests/fuzz/corpus/: the fuzzers' seed inputs, bytes as the fuzzers
#     want them;
#   * tools/ipclock/startup_path.ld: written by startup_path.py, one line
#     per function the CLI runs at start-up, as long as that list is.
# Exit 77 (skipped) outside a git checkout (a release tarball, a package
# build): which files are tracked is git's to say.
limit=600
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"
cd "$root" || exit 1

if ! files=$(git ls-files -- src include tools tests 2>/dev/null) || [ -z "$files" ]; then
  echo "file_size_test: $root is not a git checkout: skipped"
  exit 77
fi
files=$(echo "$files" | grep -v -e '^tests/fuzz/corpus/' -e '^tools/ipclock/startup_path\.ld$')
# One wc for all the files (xargs splits the list only if it is huge); its
# "total" lines are dropped. The tree's file names have no spaces.
long=$(echo "$files" | xargs wc -l | awk -v limit="$limit" \
         '$2 != "total" && $1 > limit { print $2 ": " $1 " lines" }')
if [ -n "$long" ]; then
  echo "files over $limit lines (split them into files with one job each):"
  echo "$long"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
