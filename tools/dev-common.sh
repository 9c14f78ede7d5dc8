# shellcheck shell=bash
# Sourced by tools/dev and the scripts it runs (tools/cross.sh,
# tools/footprint.sh, tools/package.sh): messages, package installs, builds
# and test servers. Expects `here` (the source root) to be set.

# What building the library and the CLI needs, and no more (`demo`).
build_packages=(meson ninja-build pkg-config g++ libabsl-dev libmbedtls-dev)
# Everything the suite uses: the optional stores' libraries, the test
# servers, PHP peers, clang for the fuzzers, CMake for the install tests,
# dpkg-dev, which Meson asks for Debian's multiarch libdir (as in a build
# by hand, doc/install.md), and prometheus for promtool (the metrics tests
# check their text with it), and ccache, which the suite's many builds of
# the same sources (plain, sanitizers, fuzzers, clang, cross, the subproject
# test) go through.
packages=(
  "${build_packages[@]}"
  dpkg-dev cmake python3 clang libclang-rt-14-dev ccache
  liburing-dev libcmocka-dev libxxhash-dev libhiredis-dev libpq-dev
  libmariadb-dev libsqlite3-dev libmemcached-dev libzookeeper-mt-dev
  util-linux procps strace
  man-db groff-base prometheus
  php-cli php-symfony-lock php-symfony-semaphore php-redis php-pgsql php-mysql php-sqlite3 php-memcached
  redis-server postgresql mariadb-server memcached zookeeperd
  etcd-server etcd-client openssl
)
packages_why="build and test ipclock: compilers, every optional store's library, the test servers and the PHP peers"

# The local stores' DSNs that `tools/dev storm` runs the CLI storm on, as
# the suite does (tests/meson.build).
storm_dsns=('flock://{tmpdir}?removeipc=ignore' semaphore posix-semaphore 'shm://{shm}')

# The seconds after which a long step (an install, a build, the suite) that
# has said nothing gets a line: 25, so that on a busy machine, where a
# ticker's line comes a second or two late, no step goes 30 s without one.
# IPCLOCK_PROGRESS_EVERY is for tests/dev_progress_test.sh.
progress_every=${IPCLOCK_PROGRESS_EVERY:-25}

# A heading, with the time of day, so that a log shows how long each step
# took.
say() { printf '\033[1m== %(%H:%M:%S)T %s\033[0m\n' -1 "$*" >&2; }

# with_heartbeat WHAT CMD...: runs CMD, with a line every progress_every
# seconds while it runs saying how long WHAT has taken so far; CMD's status.
# For steps that say nothing for a minute or more on a busy machine
# (mmdebstrap, removing a root of 50,000 files).
with_heartbeat() {
  local what="$1" start=$SECONDS ticker status=0
  shift
  # The ticker sleeps a second at a time, so that it is gone within one
  # once CMD ends (a `sleep 30` left behind would hold a pipe open).
  (
    while :; do
      for ((i = 0; i < progress_every; i++)); do sleep 1; done
      echo "  ... $((SECONDS - start)) s into $what" >&2
    done
  ) &
  ticker=$!
  "$@" || status=$?
  kill "$ticker" 2>/dev/null
  wait "$ticker" 2>/dev/null || true
  return "$status"
}

# cached COMPILER: COMPILER behind ccache where ccache is installed, for CC
# and CXX. Meson puts ccache in front of the compilers it finds by itself,
# but not in front of one named in CC or CXX or in a cross file.
cached() {
  if command -v ccache >/dev/null; then echo "ccache $1"; else echo "$1"; fi
}

# usage_lines FIRST LAST: prints lines FIRST..LAST of the running script (its
# header comment, without the "# ") to stderr and exits 64, the status of a
# command line that is wrong.
usage_lines() {
  sed -n "$1,$2p" "$0" | sed 's/^# \{0,1\}//' >&2
  exit 64
}

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

# apt_install [--for WHY] PACKAGE...: install those not installed yet
# (NAME:ARCH for another architecture's package), saying which and why, with
# apt's progress in steps of 10%. apt's own output goes to a log, shown in
# full when it fails.
apt_updated=0
apt_install() {
  local why=""
  if [ "${1:-}" = --for ]; then why=" to $2"; shift 2; fi
  local missing=() p
  for p in "$@"; do
    # Installed, or installed with its triggers still to run (another
    # apt-get, that has just installed something beside it, runs them).
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
      grep -Eq "install ok (installed|triggers-pending|triggers-awaited)" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${#missing[@]} Debian package(s)$why: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local log start=$SECONDS
  log=$(mktemp /tmp/ipclock-apt-XXXXXX)
  if [ "$apt_updated" -eq 0 ]; then
    echo "apt-get update" >&2
    "${sudo[@]}" apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; return 1; }
    apt_updated=1
  fi
  # Debian starts the servers it installs; the suite runs its own.
  # APT::Status-Fd puts apt's machine-readable progress on stdout too.
  local - status=0
  set -o pipefail
  "${sudo[@]}" apt-get install -y -q --no-install-recommends -o APT::Status-Fd=1 \
      "${missing[@]}" 2>&1 | tee "$log" | apt_progress >&2 || status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    cat "$log" >&2
    rm -f "$log"
    echo "apt-get install failed (status $status): the log is above" >&2
    return 1
  fi
  rm -f "$log"
  echo "installed in $((SECONDS - start)) s" >&2
}

# Reads apt-get's output with APT::Status-Fd=1 and prints what a person
# waiting wants: how much comes, then each tenth of the download and of
# the installation, and at least a line every 30 s (a big package's
# unpacking or a trigger can be silent for minutes). A shell loop, not awk:
# mawk, the awk of a minimal root, holds piped input back until a block
# fills, so that nothing would show for minutes.
apt_progress() {
  local kind pct text phase last_phase="" tenth last_tenth=0 now=""
  each_line_or_silence apt_progress_line apt_progress_silence
}

apt_progress_line() {
  case "$line" in
    *" newly installed, "*|"Need to get "*) echo "  $line"; t_out=$t_now ;;
    dlstatus:*|pmstatus:*)
      IFS=: read -r kind _ pct text <<<"$line"
      [ "$kind" = dlstatus ] && phase=downloading || phase=installing
      now=$text
      pct=${pct%%.*}
      [[ "$pct" =~ ^[0-9]+$ ]] || pct=0
      tenth=$((pct / 10))
      if [ "$tenth" -gt 0 ] && { [ "$phase" != "$last_phase" ] || [ "$tenth" -gt "$last_tenth" ]; }; then
        printf '  %s: %d%% (%s)\n' "$phase" $((tenth * 10)) "$text"
        last_phase=$phase last_tenth=$tenth t_out=$t_now
      elif [ $((t_now - t_out)) -ge $((progress_every * 1000)) ]; then
        echo "  still $phase ($text)"
        t_out=$t_now
      fi
      ;;
  esac
}

apt_progress_silence() {
  local quiet=$(((t_now - t_in) / 1000))
  if [ "$quiet" -gt 0 ]; then quiet=" after $quiet s"; else quiet=""; fi
  echo "  still ${phase:-working}$quiet${now:+ ($now)}"
}

# each_line_or_silence ON_LINE ON_SILENCE: reads standard input to its end,
# calling ON_LINE for each line (in `line`; a last one without a newline
# too), and ON_SILENCE when progress_every seconds pass after the last line
# printed without another. Both see, in milliseconds (ms_now), t_now, t_in
# (when the last line came) and t_out (when a line was last printed): ON_LINE
# sets t_out=$t_now when it prints; after ON_SILENCE that is done for it.
# They see the caller's locals too (bash's scoping is dynamic).
each_line_or_silence() {
  local on_line=$1 on_silence=$2 line rc t_now t_in t_out
  ms_now t_in
  t_out=$t_in
  while :; do
    rc=0
    read_until "$t_out" || rc=$?
    ms_now t_now
    if [ "$rc" -gt 128 ]; then
      "$on_silence"
      t_out=$t_now
      continue
    fi
    [ "$rc" -eq 0 ] || [ -n "$line" ] || break
    t_in=$t_now
    "$on_line"
    [ "$rc" -eq 0 ] || break
  done
}

# ms_now VAR: the time in milliseconds, into VAR (no process started).
ms_now() {
  local _us=${EPOCHREALTIME//[!0-9]/}
  printf -v "$1" '%s' $((_us / 1000))
}

# read_until T_OUT: reads a line into `line`, waiting until progress_every
# seconds after T_OUT (ms_now's time of the last line printed) at most;
# read's status (above 128 when that time came first).
read_until() {
  local t_read left
  ms_now t_read
  left=$((progress_every * 1000 - (t_read - $1)))
  [ "$left" -ge 10 ] || left=10
  line=""
  IFS= read -r -t "$((left / 1000)).$(printf '%03d' $((left % 1000)))" line
}

# build DIR [meson args...]: configure (again, if the dir exists, so that
# libraries installed since are found), then compile, showing how many of
# the build's steps are done.
build() {
  local dir="$1"
  shift
  local setup=(meson setup)
  [ ! -f "$dir/build.ninja" ] || setup+=(--reconfigure)
  # Without dpkg-dev, Meson cannot ask dpkg-architecture for Debian's
  # multiarch libdir and takes lib64, where Debian's pkg-config and CMake do
  # not look; the compiler knows it too. A cross file gives its own.
  local multiarch=""
  if ! command -v dpkg-architecture >/dev/null && [[ " $* " != *" --cross-file "* ]]; then
    # shellcheck disable=SC2086 # CC may be "ccache clang"
    multiarch=$(${CC:-cc} -print-multiarch 2>/dev/null || true)
  fi
  [ -z "$multiarch" ] || setup+=(--libdir "lib/$multiarch")
  "${setup[@]}" "$dir" --werror "$@"
  ninja_progress -C "$dir"
}

# ninja_progress NINJA_ARGS...: ninja. On a terminal ninja shows its step
# count in one line; elsewhere (a log) it prints a line per step, of which
# this keeps one per 2.5% of the build, and everything else ninja prints
# (compiler messages, the failed command) in full; and when 30 s pass
# without a line (a busy machine, a long link), the last step seen and how
# long it has been. A shell loop, not awk: mawk, the awk of a minimal root,
# holds piped input back until a block fills.
ninja_progress() {
  if [ -t 1 ]; then
    ninja "$@"
    return
  fi
  local -
  set -o pipefail
  ninja "$@" | {
    local last=-1 step n m seen="" shown=""
    each_line_or_silence ninja_progress_line ninja_progress_silence
  } || return "${PIPESTATUS[0]}"
}

ninja_progress_line() {
  if [[ "$line" =~ ^\[([0-9]+)/([0-9]+)\]\  ]]; then
    n=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]}
    step=$((n * 40 / m))
    seen=$line
    # One line per 2.5% of the build, and one at least every interval.
    if [ "$step" -gt "$last" ] || [ "$n" -eq "$m" ] ||
       [ $((t_now - t_out)) -ge $((progress_every * 1000)) ]; then
      printf '%s\n' "$line"
      last=$step t_out=$t_now shown=$line
    fi
  else
    printf '%s\n' "$line"
    t_out=$t_now
  fi
}

# The last step seen, if it was not shown; else how long since.
ninja_progress_silence() {
  if [ "$shown" != "$seen" ]; then
    printf '%s\n' "$seen"
    shown=$seen
  else
    echo "  ... $(((t_now - t_in) / 1000)) s since: ${seen:-the build started}"
  fi
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

# The named IPC objects on this machine: files in /dev/shm (shm segments,
# POSIX semaphores and their registries) and SysV semaphore sets, less
# what the test servers keep there, which comes and goes with them:
# PostgreSQL's segments and the etcd members' data dirs.
ipc_objects() {
  {
    ls -1A /dev/shm 2>/dev/null | grep -Ev '^(PostgreSQL\.|etcd-test-data-)' || true
    ipcs -s 2>/dev/null | awk '/^0x/ { print "SysV semaphore set key " $1 " id " $2 }'
  } | sort
}

# children_of PID: the PIDs of PID's child processes, one a line (from
# /proc: in /proc/N/stat, the second field after the command's name is the
# parent's PID).
children_of() {
  local d stat
  for d in /proc/[0-9]*; do
    { read -r stat <"$d/stat"; } 2>/dev/null || continue
    stat=${stat##*) }
    stat=${stat#* }
    [ "${stat%% *}" = "$1" ] && echo "${d#/proc/}"
  done
  return 0
}

# suite_ticker PID: while the shell PID runs `meson test`, a line every
# 30 s with the time so far and the tests still running (meson test itself
# says nothing until a test ends, and one may run for minutes).
suite_ticker() {
  local main=$1 start=$SECONDS i meson t args names rest
  while :; do
    for ((i = 0; i < progress_every; i++)); do
      sleep 1
      kill -0 "$main" 2>/dev/null || return 0
    done
    names=""
    # The shell's children are meson test and this ticker.
    for meson in $(children_of "$main"); do
      [ "$meson" != "$BASHPID" ] || continue
      for t in $(children_of "$meson"); do
        mapfile -d '' args <"/proc/$t/cmdline" 2>/dev/null || continue
        [ ${#args[@]} -gt 0 ] || continue
        # A script's name is its second word (sh NAME).
        case "${args[0]##*/}:${args[1]:-}" in
          *sh:-c) names+=" sh -c ${args[2]:0:60}" ;;
          sh:*|bash:*|dash:*|python3:*) names+=" ${args[1]#"$here"/}" ;;
          *) rest="${args[*]:1}"; names+=" ${args[0]##*/}${rest:+ ${rest:0:60}}" ;;
        esac
        names+=";"
      done
    done
    echo "  ... $((SECONDS - start)) s into the suite; running:${names:- (between tests)}" >&2
  done
}

# run_suite DIR [MESON TEST ARGS]: runs the suite, then looks for IPC
# objects it left. Tests remove what they make, and a store removes what its
# last user let go cleanly, so a new one is a leak in a test or in a store.
# Under CI=true that fails the run; elsewhere it is said (another program on
# the machine may have made it).
run_suite() {
  local dir="$1" before left status=0
  shift
  say "test suite: $dir"
  before=$(ipc_objects)
  local ticker
  suite_ticker "$$" &
  ticker=$!
  meson test -C "$dir" --print-errorlogs "$@" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  left=$(comm -13 <(echo "$before") <(ipc_objects))
  if [ -n "$left" ]; then
    echo "the suite in $dir left these IPC objects behind:" >&2
    echo "$left" | sed 's/^/  /' >&2
    if [ "${CI:-}" = true ] && [ "$status" -eq 0 ]; then status=1; fi
  fi
  return "$status"
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
