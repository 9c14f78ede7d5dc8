#!/bin/sh
# The layering check (layering_test.sh) against a copy of the tree with one
# bad include planted at a time: each must fail the check, naming the file.
# A checker whose rules stopped matching (a case that shadows another, a
# folder renamed) would pass every tree; this is what catches that. The
# copy is of what the check reads (src, include/ipclock, tools), a few MB.
root="${IPCLOCK_SOURCE_ROOT:-$(dirname "$0")/..}"
root=$(cd "$root" && pwd) || exit 1
copy=$(mktemp -d) || exit 1
trap 'rm -rf "$copy"' EXIT
mkdir -p "$copy/include" || exit 1
cp -R "$root/src" "$root/tools" "$copy/" && cp -R "$root/include/ipclock" "$copy/include/" ||
  exit 1

checker=layering_test.sh
planted="a bad include"
# shellcheck source=tests/planted_check.sh
. "$root/tests/planted_check.sh"

# plant FILE INCLUDE: adds `#include INCLUDE` to FILE's includes, checks that
# the check refuses it, and puts the file back.
plant() {
  cp "$copy/$1" "$copy/$1.orig" || exit 1
  awk -v inc="$2" '!done && /^#include/ { print "#include " inc; done = 1 } { print }' \
    "$copy/$1.orig" > "$copy/$1" || exit 1
  check "$1"
  mv "$copy/$1.orig" "$copy/$1"
}

check clean
plant src/core/key.cc '"stores/flock/flock_store.h"'          # a store from core
plant src/core/lock.cc '"ipclock/stores/redis_store.h"'       # a public store header from core
plant src/stores/flock/flock_store.cc '"registry/store_registry.h"'  # the registry from a store
plant src/stores/redis/redis_dsn.cc '"stores/flock/flock_file.h"'    # another store's folder
plant src/platform/files.cc '"core/dsn.h"'                    # core from platform
plant tools/ipclock/run_command.cc '<stores/flock/flock_store.h>'    # <stores/...> from a tool
plant src/registry/store_factory.cc '"../core/dsn.h"'         # a path around the layers
plant include/ipclock/lock_guard.h '"ipclock/stores/flock_store.h"'  # a store from an app header
plant include/ipclock/lock.h '"ipclock/spi/key.h"'            # the store SPI from an app header
plant include/ipclock/stores/flock_store.h '"ipclock/spi/store_interface.h"'  # ... from a store's
check clean
[ "$failures" -eq 0 ] || { echo "$failures planted includes were not refused"; exit 1; }
echo "every planted include was refused"
