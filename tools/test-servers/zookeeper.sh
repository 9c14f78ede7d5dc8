# shellcheck shell=bash
# Sourced by tools/dev before the suites run: starts a throwaway standalone
# ZooKeeper server for the zookeeper store's tests and exports its DSN.
#
#   IPCLOCK_TEST_ZOOKEEPER   zookeeper://127.0.0.1:BASE+40
#
# BASE is $IPCLOCK_TEST_PORT_BASE (tools/test-servers/ports.sh).
#
#   - Debian's zookeeperd jars, run by tools/test-servers/zookeeper-server
#     (see there for the settings: 500 ms ticks, so sessions of 1 s and
#     more), never the system service, from a fresh temp dir, on 127.0.0.1.
#   - A server that does not answer `ruok` within 60 s is a failure (a JVM
#     starts in 2-3 s on a small machine; the time is printed).
#   - Its stop and the removal of the dir go on cleanup_cmds.
#   - The three-server ensemble (BASE+41..49) is started by the ensemble
#     tests themselves (tests/zookeeper_ensemble_test.sh): it takes a while.
#
# Without Java or the jars it says so and exports nothing: the suites then
# skip, except under CI=true. A port already in use is reported, and the
# variable is not exported (the tests must not run against a stranger).

ipclock_start_test_zookeeper() {
  local server
  server="$(dirname "${BASH_SOURCE[0]}")/zookeeper-server"
  ipclock_server_available "$server" "no java or ZooKeeper jars (apt-get install zookeeperd)" || return 0
  local port=$((IPCLOCK_TEST_PORT_BASE + 40))
  if ipclock_port_taken "$port"; then
    echo "test-servers/zookeeper.sh: something already listens on 127.0.0.1:$port; not starting a second server, IPCLOCK_TEST_ZOOKEEPER stays unset" >&2
    return 0
  fi
  local dir
  dir="$(mktemp -d /tmp/ipclock-zookeeper-XXXXXX)"
  cleanup_cmds+=("'$server' stop '$dir'; rm -rf '$dir'")
  local t0
  t0=$(date +%s%N)
  "$server" start "$dir" "$port" || return 1
  if ! "$server" wait "$dir" "$port" 60; then
    echo "test-servers/zookeeper.sh: ZooKeeper on port $port did not start" >&2
    return 1
  fi
  export IPCLOCK_TEST_ZOOKEEPER="zookeeper://127.0.0.1:$port"
  echo "test-servers/zookeeper.sh: ZooKeeper standalone on 127.0.0.1:$port, serving after $(( ($(date +%s%N) - t0) / 1000000 )) ms ($dir)" >&2
}

ipclock_start_test_zookeeper
