#!/bin/sh
# Installs the build into a temp dir, then builds two programs against it
# using only what `pkg-config` prints, once with `--libs` and once with
# `--static --libs`: tests/capi_pkgconfig/main.c (C11, <ipclock/c.h>) with the
# C compiler and main.cc (C++17, <ipclock/ipclock.h>) with the C++ compiler.
# Runs each on every store the build has, and checks that the C program's
# version (headers and library) is the .pc's. Then builds flock_only.c,
# which opens its stores with ipclock_store_open_kinds(), and checks from
# its symbols that it links the flock store and no other. Catches a .pc
# file that leaves out a library (the C++ runtime for C programs above all)
# or names one that is not installed (as libpq's private static libraries
# are not, on Debian), a version.h that is missing or stale, and a change
# that makes opening one store kind link them all.
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

# With client_libraries=dlopen (the default; doc/install.md) the remote
# stores' client libraries are loaded when first used: the .pc names none.
if grep -q "^#define IPCLOCK_CLIENT_LIBRARIES_DLOPEN 1" "$build/ipclock_config.h"; then
  all=$(PKG_CONFIG_PATH="$tmp/pc" pkg-config --libs --static ipclock)
  for lib in -lhiredis -lpq -lmariadb -lsqlite3 -lmemcached -lzookeeper_mt; do
    case " $all " in
      *" $lib "*)
        echo "ipclock.pc names $lib, which a dlopen build loads on first use" >&2
        exit 1 ;;
    esac
  done
  echo "ipclock.pc names no client library (client_libraries=dlopen)"
fi

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

# A program that opens flock stores only (ipclock_store_open_kinds()) links
# the flock store alone: no other store's code, and not the registry that
# knows them all (which ipclock_store_open() brings in). Checked on its
# symbols, then run.
flags=$(PKG_CONFIG_PATH="$tmp/pc" pkg-config --cflags --libs ipclock)
# shellcheck disable=SC2086
$cc $san -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$tmp/flock-only" \
    "$src/tests/capi_pkgconfig/flock_only.c" $flags
if [ -z "${IPCLOCK_CROSS:-}" ]; then
  others=$(nm -C "$tmp/flock-only" |
           grep -E 'ipclock::(StoreRegistry|New(Shm|Semaphore|PosixSemaphore|InMemory|Redis|Postgres|Mysql|Memcached|ZooKeeper|Etcd|Combined)[A-Za-z]*Store)\(|ipclock_kind_(shm|semaphore|posix_semaphore|in_memory|redis)\b' || true)
  if [ -n "$others" ] || ! nm -C "$tmp/flock-only" | grep -q 'ipclock::NewFlockStore('; then
    echo "the flock-only program links other stores (or no flock store):" >&2
    echo "$others" >&2
    exit 1
  fi
  echo "flock-only program: no store but flock linked"
fi
"$tmp/flock-only" "flock://$tmp/locks?removeipc=ignore" "shm://$shm_name"
