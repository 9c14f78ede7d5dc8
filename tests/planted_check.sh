# shellcheck shell=sh disable=SC2154 # copy, root, checker, planted: set by the sourcing test
# The `check` of the self-tests of the tree checks (layering_self_test.sh,
# store_errors_self_test.sh), sourced by them. It runs the checker
# `$checker` (a script of tests/) on the copy of the tree in `$copy`:
#   check clean   the copy as it is must pass;
#   check FILE    the copy, with `$planted` (what was put in, for the
#                 message) planted in FILE, must fail, naming FILE.
# Each check that goes otherwise adds one to `$failures`.
failures=0
check() {
  out=$(IPCLOCK_SOURCE_ROOT="$copy" sh "$root/tests/$checker" 2>&1)
  status=$?
  if [ "$1" = clean ]; then
    [ "$status" -eq 0 ] && return
    echo "the tree as it is fails the check:"; echo "$out"
  elif [ "$status" -ne 0 ] && printf '%s\n' "$out" | grep -q "^$1:"; then
    echo "refused, as it must be: $(printf '%s\n' "$out" | grep "^$1:")"
    return
  else
    echo "$planted in $1 passed the check (status $status):"; echo "$out"
  fi
  failures=$((failures + 1))
}
