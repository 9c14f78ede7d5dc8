#!/bin/sh
# Installs the build into a temp dir, then builds tests/capi_pkgconfig/main.c
# with the C compiler against it using only `pkg-config --cflags --libs`, and runs
# it on the flock and in-memory stores. Catches a .pc file that leaves out a
# library C programs need (the C++ runtime above all).
#
# Environment: IPCLOCK_BUILD_ROOT, IPCLOCK_SOURCE_ROOT (set by meson test),
# CC (the C compiler command; default cc), SANITIZE (b_sanitize of the build).
set -eu

build=${IPCLOCK_BUILD_ROOT:?}
src=${IPCLOCK_SOURCE_ROOT:?}
cc=${CC:-cc}
tmp=$(mktemp -d /tmp/ipclock-pkgconfig-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/dest" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log" >&2
  exit 1
}
pc=$(find "$tmp/dest" -name ipclock.pc | head -n 1)
[ -n "$pc" ] || { echo "no ipclock.pc was installed" >&2; exit 1; }
# The .pc names the configured prefix; a copy points at the staged tree.
# (pkg-config --define-variable would redefine the prefix of every package
# it reads, the system's absl and libpq too.)
prefix=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=prefix ipclock)
mkdir "$tmp/pc"
sed "s|^prefix=.*|prefix=$tmp/dest$prefix|" "$pc" >"$tmp/pc/ipclock.pc"

flags=$(PKG_CONFIG_PATH="$tmp/pc" pkg-config --cflags --libs ipclock)
echo "pkg-config: $flags"
sanitize=${SANITIZE:-none}
[ "$sanitize" = none ] || flags="-fsanitize=$sanitize $flags"
# shellcheck disable=SC2086  # $cc and $flags are word lists
$cc -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$tmp/main" \
    "$src/tests/capi_pkgconfig/main.c" $flags

mkdir "$tmp/locks"
# Every store this build has: the local ones always, the remote ones when the
# suite's test servers run (tools/test-servers/*.sh export their DSNs).
shm_name="ipclock-pkgconfig-$$"
trap 'rm -rf "$tmp"; rm -f "/dev/shm/ipclock.$shm_name"' EXIT INT TERM
set -- "flock://$tmp/locks?removeipc=ignore" in-memory \
       "shm://$shm_name?removeipc=ignore" "semaphore?removeipc=ignore" \
       "posix-semaphore?prefix=ipclock-pkgconfig-$$&removeipc=ignore"
[ -z "${IPCLOCK_TEST_REDIS:-}" ] || set -- "$@" "$IPCLOCK_TEST_REDIS?secret=none"
[ -z "${IPCLOCK_TEST_POSTGRES:-}" ] || set -- "$@" "$IPCLOCK_TEST_POSTGRES"
"$tmp/main" "$@"
