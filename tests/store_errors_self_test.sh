#!/bin/sh
# The store-errors check (store_errors_test.sh) against a copy of src/stores
# with one hand-made status planted at a time: each must fail the check,
# naming the file. A pattern that stopped matching would pass every tree;
# this is what catches that.
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"
root=$(cd "$root" && pwd) || exit 1
copy=$(mktemp -d) || exit 1
trap 'rm -rf "$copy"' EXIT
mkdir -p "$copy/src" && cp -R "$root/src/stores" "$copy/src/" || exit 1

checker=store_errors_test.sh
planted="a hand-made status"
# shellcheck source=tests/planted_check.sh
. "$root/tests/planted_check.sh"

# plant FILE LINE: appends LINE to FILE, checks that the check refuses it,
# and puts the file back.
plant() {
  cp "$copy/$1" "$copy/$1.orig" || exit 1
  printf '%s\n' "$2" >> "$copy/$1" || exit 1
  check "$1"
  mv "$copy/$1.orig" "$copy/$1"
}

check clean
plant src/stores/flock/flock_store.cc \
  'absl::Status Planted() { return absl::InvalidArgumentError("planted"); }'
plant src/stores/redis/redis_store.cc \
  'absl::Status Planted() { return absl::Status(Code(), "planted"); }'
plant src/stores/shm/shm_segment.cc \
  'bool Planted(const absl::Status& s) { return s.code() == absl::StatusCode::kNotFound; }'
check clean
[ "$failures" -eq 0 ] || { echo "$failures planted statuses were not refused"; exit 1; }
echo "every planted status was refused"
