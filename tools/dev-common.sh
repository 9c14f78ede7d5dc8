# shellcheck shell=bash
# Sourced by tools/dev and the scripts it runs (tools/cross.sh,
# tools/footprint.sh, tools/package.sh): messages, package installs, builds
# and test servers. Expects `here` (the source root) to be set.

# What building the library and the CLI needs, and no more (`demo`).
build_packages=(meson ninja-build pkg-config g++ libabsl-dev libmbedtls-dev)
# Everything the suite uses: the optional stores' libraries, the test
# servers, PHP peers, clang for the fuzzers, CMake and dpkg-dev (Debian's
# multiarch libdir) for the install tests.
packages=(
  "${build_packages[@]}"
  dpkg-dev cmake python3 clang libclang-rt-14-dev
  liburing-dev libcmocka-dev libxxhash-dev libhiredis-dev libpq-dev
  libmariadb-dev libsqlite3-dev libmemcached-dev libzookeeper-mt-dev
  util-linux procps
  man-db groff-base
  php-cli php-symfony-lock php-redis php-pgsql php-mysql php-sqlite3 php-memcached
  redis-server postgresql mariadb-server memcached zookeeperd
)

say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

# apt_install PACKAGE...: install those not installed yet (NAME:ARCH for
# another architecture's package).
apt_updated=0
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local log
  log=$(mktemp /tmp/ipclock-apt-XXXXXX)
  if [ "$apt_updated" -eq 0 ]; then
    "${sudo[@]}" apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; return 1; }
    apt_updated=1
  fi
  # Debian starts the servers it installs; the suite runs its own.
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1 ||
    { cat "$log" >&2; rm -f "$log"; return 1; }
  rm -f "$log"
}

# build DIR [meson args...]: configure (again, if the dir exists, so that
# libraries installed since are found), then compile.
build() {
  local dir="$1"
  shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" --werror "$@"
  else
    meson setup "$dir" --werror "$@"
  fi
  ninja --quiet -C "$dir"
}

# Test servers. Each tools/test-servers/*.sh, when sourced, starts its
# server(s) on loopback from a temp dir, exports the DSN the suites read
# (e.g. IPCLOCK_TEST_REDIS), and appends its stop command to cleanup_cmds.
# Suites skip a server's tests when its variable is unset, except under
# CI=true, where a missing server is a failure.
cleanup_cmds=()
run_cleanup() {
  local c
  for c in "${cleanup_cmds[@]}"; do eval "$c" || true; done
}
trap run_cleanup EXIT
start_test_servers() {
  local s
  source "$here/tools/test-servers/ports.sh"
  for s in "$here"/tools/test-servers/*.sh; do
    [ -f "$s" ] && [ "${s##*/}" != ports.sh ] || continue
    # shellcheck disable=SC1090
    source "$s"
  done
}

run_suite() {
  local dir="$1"
  shift
  say "test suite: $dir"
  meson test -C "$dir" --print-errorlogs "$@"
}

# cross_arch ARCH: sets deb_arch, triplet, qemu (qemu-user binary),
# binfmt_name and cross_file for aarch64 (arm64) or armhf (arm); fails on
# another name.
cross_arch() {
  case "$1" in
    aarch64|arm64) deb_arch=arm64 triplet=aarch64-linux-gnu qemu_name=aarch64 ;;
    armhf|arm) deb_arch=armhf triplet=arm-linux-gnueabihf qemu_name=arm ;;
    *) echo "unknown architecture '$1' (aarch64 or armhf)" >&2; return 64 ;;
  esac
  qemu=qemu-$qemu_name-static
  binfmt_name=qemu-$qemu_name
  cross_file="$here/cross/debian-$deb_arch.ini"
}

# The -dev packages of the libraries for the target architecture, installed
# beside the host's (Debian multiarch). libpq-dev is left out: its arm64
# and amd64 packages cannot be installed together (apt removes the host's),
# so cross builds are configured with -Dpostgres=disabled.
cross_lib_packages=(libabsl-dev libmbedtls-dev liburing-dev libcmocka-dev libxxhash-dev
                    libhiredis-dev)

# cross_install ARCH: the cross toolchain, qemu-user and the target's
# libraries; registers qemu with binfmt_misc so that the kernel runs the
# target's programs when a test starts one (the suite's CLI tests do).
cross_install() {
  cross_arch "$1"
  if ! dpkg --print-foreign-architectures | grep -qx "$deb_arch"; then
    say "adding the $deb_arch architecture to dpkg"
    "${sudo[@]}" dpkg --add-architecture "$deb_arch"
    apt_updated=0
  fi
  local p pkgs=("crossbuild-essential-$deb_arch" qemu-user-static "${packages[@]}")
  for p in "${cross_lib_packages[@]}"; do pkgs+=("$p:$deb_arch"); done
  apt_install "${pkgs[@]}"
  binfmt_register
}

binfmt_register() {
  local dir=/proc/sys/fs/binfmt_misc
  if [ ! -e "$dir/register" ]; then
    "${sudo[@]}" mount -t binfmt_misc binfmt_misc "$dir" 2>/dev/null || true
  fi
  if [ ! -e "$dir/$binfmt_name" ]; then
    if [ -w "$dir/register" ] || [ ${#sudo[@]} -gt 0 ]; then
      "${sudo[@]}" sh -c "cat /usr/lib/binfmt.d/$binfmt_name.conf > $dir/register" 2>/dev/null || true
    fi
  fi
  if [ ! -e "$dir/$binfmt_name" ]; then
    echo "warning: could not register $qemu with binfmt_misc; tests that start" \
         "$deb_arch programs (the CLI tests) will fail" >&2
  fi
}
