#!/bin/sh
# Installs the build into a temp dir, then builds two programs against it
# using only what `pkg-config` prints, once with `--libs` and once with
# `--static --libs`: tests/capi_pkgconfig/main.c (C11, <ipclock/c.h>) with the
# C compiler and main.cc (C++17, <ipclock/ipclock.h>) with the C++ compiler.
# Runs each on every store the build has, and checks that the C program's
# version (headers and library) is the .pc's. Catches a .pc file that leaves
# out a library (the C++ runtime for C programs above all) or names one that
# is not installed (as libpq's private static libraries are not, on Debian),
# and a version.h that is missing or stale.
#
# Environment: IPCLOCK_BUILD_ROOT, IPCLOCK_SOURCE_ROOT (set by meson test),
# CC, CXX (compiler commands; default cc, c++), SANITIZE (b_sanitize of the
# build).
set -eu

build=${IPCLOCK_BUILD_ROOT:?}
src=${IPCLOCK_SOURCE_ROOT:?}
cc=${CC:-cc}
cxx=${CXX:-c++}
tmp=$(mktemp -d /tmp/ipclock-pkgconfig-XXXXXX)
shm_name="ipclock-pkgconfig-$$"
trap 'rm -rf "$tmp"; rm -f "/dev/shm/ipclock.$shm_name"' EXIT INT TERM

. "$src/tests/stage_install.sh"
stage_install "$build" "$tmp/dest"
pc=$(staged_file "$tmp/dest" ipclock.pc)
# The .pc names the configured prefix; a copy points at the staged tree.
# (pkg-config --define-variable would redefine the prefix of every package
# it reads, the system's absl and libpq too.)
prefix=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=prefix ipclock)
mkdir "$tmp/pc"
sed "s|^prefix=.*|prefix=$tmp/dest$prefix|" "$pc" >"$tmp/pc/ipclock.pc"

sanitize=${SANITIZE:-none}
san=
[ "$sanitize" = none ] || san="-fsanitize=$sanitize"
# UBSan's vptr check needs the RTTI of every class whose objects it sees;
# libipclock.a is built with -fno-rtti, so a program with RTTI (the C++
# default) gets false reports from it.
case "$sanitize" in *undefined*) san="$san -fno-sanitize=vptr" ;; esac

mkdir "$tmp/locks"
# Every store this build has: the local ones always, the remote ones when the
# suite's test servers run (tools/test-servers/*.sh export their DSNs).
set -- "flock://$tmp/locks?removeipc=ignore" in-memory \
       "shm://$shm_name?removeipc=ignore" "semaphore?removeipc=ignore" \
       "posix-semaphore?prefix=ipclock-pkgconfig-$$&removeipc=ignore"
# (A server store only if this build has it: ipclock_config.h says.)
has() { grep -q "^#define IPCLOCK_HAVE_$1 1" "$build/ipclock_config.h"; }
[ -z "${IPCLOCK_TEST_REDIS:-}" ] || ! has REDIS || set -- "$@" "$IPCLOCK_TEST_REDIS?secret=none"
[ -z "${IPCLOCK_TEST_POSTGRES:-}" ] || ! has POSTGRES || set -- "$@" "$IPCLOCK_TEST_POSTGRES"

for mode in plain static; do
  static=
  [ "$mode" = plain ] || static=--static
  flags=$(PKG_CONFIG_PATH="$tmp/pc" pkg-config --cflags --libs $static ipclock)
  echo "pkg-config --cflags --libs $static ipclock: $flags"
  # shellcheck disable=SC2086  # $cc, $cxx, $san and $flags are word lists
  $cc $san -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$tmp/c-$mode" \
      "$src/tests/capi_pkgconfig/main.c" $flags
  # shellcheck disable=SC2086
  $cxx $san -std=c++17 -fno-exceptions -Wall -Wextra -Werror -o "$tmp/cxx-$mode" \
       "$src/tests/capi_pkgconfig/main.cc" $flags
  echo "C program ($mode):"
  status=0
  "$tmp/c-$mode" "$@" >"$tmp/c-$mode.out" || status=$?
  cat "$tmp/c-$mode.out"
  [ "$status" -eq 0 ] || exit "$status"
  # The installed version.h, the library and ipclock.pc agree.
  want="version $(PKG_CONFIG_PATH="$tmp/pc" pkg-config --modversion ipclock)"
  grep -qx "$want" "$tmp/c-$mode.out" || {
    echo "the C program did not print '$want'" >&2
    exit 1
  }
  echo "C++ program ($mode):"
  "$tmp/cxx-$mode" "$@"
done
