# shellcheck shell=bash
# Sourced by tools/dev before the suites run: starts throwaway Redis servers
# for the redis store's tests and exports their DSNs.
#
#   IPCLOCK_TEST_REDIS       redis://127.0.0.1:BASE
#   IPCLOCK_TEST_REDIS_2     redis://127.0.0.1:BASE+1  (three servers for the
#   IPCLOCK_TEST_REDIS_3     redis://127.0.0.1:BASE+2   combined-store tests)
#   IPCLOCK_TEST_REDIS_AUTH  redis://:PASSWORD@127.0.0.1:BASE+3 (requirepass,
#                            a random password, for the AUTH tests)
#
# BASE is $IPCLOCK_TEST_PORT_BASE (tools/test-servers/ports.sh).
#
#   - Debian's redis-server binary (redis-server package), never the system
#     service: each server runs from a fresh temp dir, on 127.0.0.1 only,
#     with no persistence (no RDB snapshots, no AOF), daemonized with a
#     pidfile.
#   - A server that does not answer PING within 10 s is a failure.
#   - Their stop (SIGTERM through the pidfiles; nothing is saved) and the
#     removal of the dir go on cleanup_cmds.
#   - redis_store_test starts its own servers from BASE+90 for the tests
#     that kill a server; nothing here uses those ports.
#
# Without redis-server it says so and exports nothing: the suites then skip,
# except under CI=true. A port already in use is reported, and that server's
# variable is not exported (the tests must not run against a stranger).

ipclock_start_test_redis() {
  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    echo "test-servers/redis.sh: no redis-server/redis-cli (apt-get install redis-server); its tests will be skipped" >&2
    return 0
  fi
  local dir
  dir="$(mktemp -d /tmp/ipclock-redis-XXXXXX)"
  local password
  password="$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
  # Registered first, so that a failure below still removes the dir. The
  # pidfile kill covers a server that no longer answers SHUTDOWN.
  cleanup_cmds+=("for f in '$dir'/redis-*.pid; do [ -f \"\$f\" ] && kill \"\$(cat \"\$f\")\" 2>/dev/null; done; sleep 0.2; rm -rf '$dir'")

  local port var auth args spec
  local base=$IPCLOCK_TEST_PORT_BASE
  for spec in $((base)):IPCLOCK_TEST_REDIS: $((base + 1)):IPCLOCK_TEST_REDIS_2: \
              $((base + 2)):IPCLOCK_TEST_REDIS_3: $((base + 3)):IPCLOCK_TEST_REDIS_AUTH:auth; do
    IFS=: read -r port var auth <<<"$spec"
    if redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 ||
       redis-cli -h 127.0.0.1 -p "$port" ping 2>&1 | grep -q NOAUTH; then
      echo "test-servers/redis.sh: something already listens on 127.0.0.1:$port; not starting a second server, $var stays unset" >&2
      continue
    fi
    args=(--port "$port" --bind 127.0.0.1 --save "" --appendonly no
          --dir "$dir" --dbfilename "dump-$port.rdb"
          --daemonize yes --pidfile "$dir/redis-$port.pid"
          --logfile "$dir/redis-$port.log")
    [ "$auth" = "auth" ] && args+=(--requirepass "$password")
    if ! redis-server "${args[@]}"; then
      echo "test-servers/redis.sh: redis-server on port $port did not start" >&2
      return 1
    fi
    local i ok=0
    local cli=(redis-cli -h 127.0.0.1 -p "$port")
    [ "$auth" = "auth" ] && cli+=(--no-auth-warning -a "$password")
    for i in $(seq 1 100); do
      if [ "$("${cli[@]}" ping 2>/dev/null)" = "PONG" ]; then
        ok=1
        break
      fi
      sleep 0.1
    done
    if [ "$ok" -ne 1 ]; then
      echo "test-servers/redis.sh: redis-server on port $port does not answer PING:" >&2
      cat "$dir/redis-$port.log" >&2 || true
      return 1
    fi
    if [ "$auth" = "auth" ]; then
      export "$var=redis://:$password@127.0.0.1:$port"
    else
      export "$var=redis://127.0.0.1:$port"
    fi
  done
  echo "test-servers/redis.sh: Redis $(redis-server --version | sed 's/.* v=\([^ ]*\).*/\1/') on 127.0.0.1:$base-$((base + 3)) ($dir)" >&2
}

ipclock_start_test_redis
