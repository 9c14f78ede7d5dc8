# shellcheck shell=bash
# Sourced by tools/dev before the suites run: starts throwaway memcached
# servers for the memcached store's tests and exports their DSNs.
#
#   IPCLOCK_TEST_MEMCACHED     memcached://127.0.0.1:BASE+30
#   IPCLOCK_TEST_MEMCACHED_2   memcached://127.0.0.1:BASE+31 (a second server,
#                              for the tests of several servers)
#
# BASE is $IPCLOCK_TEST_PORT_BASE (tools/test-servers/ports.sh).
#
#   - Debian's memcached binary (memcached package), never the system
#     service: each server runs from a fresh temp dir, on 127.0.0.1 only,
#     TCP only (-U 0), 64 MB, daemonized with a pidfile.
#   - A server that does not answer `version` within 10 s is a failure.
#   - Their stop (SIGTERM through the pidfiles) and the removal of the dir go
#     on cleanup_cmds.
#   - memcached_store_test starts its own servers from BASE+90 for the
#     tests that restart or starve a server; nothing here uses those ports.
#
# Without memcached it says so and exports nothing: the suites then skip,
# except under CI=true. A port already in use is reported, and that server's
# variable is not exported (the tests must not run against a stranger).

# Prints the server's answer to `version` on 127.0.0.1:$1, or nothing.
ipclock_memcached_version() {
  local line=""
  {
    exec 3<>"/dev/tcp/127.0.0.1/$1" &&
      printf 'version\r\n' >&3 &&
      IFS= read -r -t 1 line <&3
  } 2>/dev/null || true
  exec 3<&- 3>&- 2>/dev/null || true
  printf '%s' "${line%$'\r'}"
}

ipclock_start_test_memcached() {
  if ! command -v memcached >/dev/null 2>&1; then
    echo "test-servers/memcached.sh: no memcached (apt-get install memcached); its tests will be skipped" >&2
    return 0
  fi
  local dir
  dir="$(mktemp -d /tmp/ipclock-memcached-XXXXXX)"
  cleanup_cmds+=("for f in '$dir'/memcached-*.pid; do [ -f \"\$f\" ] && kill \"\$(cat \"\$f\")\" 2>/dev/null; done; sleep 0.2; rm -rf '$dir'")

  local base=$IPCLOCK_TEST_PORT_BASE
  local spec port var
  local user=()
  # memcached refuses to run as root unless told which user to be.
  [ "$(id -u)" -eq 0 ] && user=(-u root)
  for spec in $((base + 30)):IPCLOCK_TEST_MEMCACHED $((base + 31)):IPCLOCK_TEST_MEMCACHED_2; do
    IFS=: read -r port var <<<"$spec"
    if [ -n "$(ipclock_memcached_version "$port")" ]; then
      echo "test-servers/memcached.sh: something already listens on 127.0.0.1:$port; not starting a second server, $var stays unset" >&2
      continue
    fi
    if ! memcached "${user[@]}" -l 127.0.0.1 -p "$port" -U 0 -m 64 -d \
        -P "$dir/memcached-$port.pid"; then
      echo "test-servers/memcached.sh: memcached on port $port did not start" >&2
      return 1
    fi
    local i ok=0
    for i in $(seq 1 100); do
      if [ -n "$(ipclock_memcached_version "$port")" ]; then
        ok=1
        break
      fi
      sleep 0.1
    done
    if [ "$ok" -ne 1 ]; then
      echo "test-servers/memcached.sh: memcached on port $port does not answer 'version'" >&2
      return 1
    fi
    export "$var=memcached://127.0.0.1:$port"
  done
  echo "test-servers/memcached.sh: $(ipclock_memcached_version $((base + 30))) on 127.0.0.1:$((base + 30))-$((base + 31)) ($dir)" >&2
}

ipclock_start_test_memcached
