# shellcheck shell=bash
# Sourced by tools/dev before the suites run: starts throwaway etcd members
# for the etcd store's tests and exports their DSNs.
#
#   IPCLOCK_TEST_ETCD        etcd://127.0.0.1:BASE+70 (one member, plain)
#   IPCLOCK_TEST_ETCDS       etcds://127.0.0.1:BASE+72/ipclock-tls?cacert=...&cert=...&key=...
#                            (one member behind TLS that asks for a client
#                            certificate; peers on BASE+71 and BASE+73)
#   IPCLOCK_TEST_ETCD_CERTS  the dir of its CA, server and client certificates
#
# BASE is $IPCLOCK_TEST_PORT_BASE (tools/test-servers/ports.sh).
#
#   - Debian's etcd (etcd-server, etcd-client), run by
#     tools/test-servers/etcd-server (data on tmpfs, fast elections), never
#     the system service, on 127.0.0.1.
#   - A member that is not healthy within 30 s is a failure (one starts in
#     about a second; the time is printed).
#   - Their stop and the removal of the dirs go on cleanup_cmds.
#   - The three-member cluster (BASE+74..79) is started by the cluster
#     test itself (tests/etcd_cluster_test.sh), and etcd_store_test starts
#     members of its own from BASE+90.
#
# Without etcd it says so and exports nothing: the suites then skip, except
# under CI=true. Without openssl there is no TLS member (its tests skip,
# except under CI=true). A port already in use is reported, and that
# member's variable is not exported (the tests must not run against a
# stranger).

ipclock_start_test_etcd() {
  local server
  server="$(dirname "${BASH_SOURCE[0]}")/etcd-server"
  ipclock_server_available "$server" "no etcd or etcdctl (apt-get install etcd-server etcd-client)" || return 0
  local base=$IPCLOCK_TEST_PORT_BASE
  local dir
  dir="$(mktemp -d /tmp/ipclock-etcd-XXXXXX)"
  cleanup_cmds+=("'$server' stop '$dir/plain'; '$server' stop '$dir/tls'; rm -rf '$dir'")
  local t0 port
  t0=$(date +%s%N)
  port=$((base + 70))
  if ipclock_port_taken "$port"; then
    echo "test-servers/etcd.sh: something already listens on 127.0.0.1:$port; not starting a second member, IPCLOCK_TEST_ETCD stays unset" >&2
  else
    "$server" start "$dir/plain" ipclock-test "$port" $((base + 71)) || return 1
    "$server" wait "$dir/plain" "$port" 30 || return 1
    export IPCLOCK_TEST_ETCD="etcd://127.0.0.1:$port"
  fi
  port=$((base + 72))
  if ! command -v openssl >/dev/null 2>&1; then
    echo "test-servers/etcd.sh: no openssl (apt-get install openssl): no TLS member, IPCLOCK_TEST_ETCDS stays unset" >&2
  elif ipclock_port_taken "$port"; then
    echo "test-servers/etcd.sh: something already listens on 127.0.0.1:$port; IPCLOCK_TEST_ETCDS stays unset" >&2
  else
    "$server" certs "$dir/certs" || return 1
    "$server" start "$dir/tls" ipclock-test-tls "$port" $((base + 73)) "" "$dir/certs" || return 1
    "$server" wait "$dir/tls" "$port" 30 "$dir/certs" || return 1
    export IPCLOCK_TEST_ETCD_CERTS="$dir/certs"
    export IPCLOCK_TEST_ETCDS="etcds://127.0.0.1:$port/ipclock-tls?cacert=$dir/certs/ca.pem&cert=$dir/certs/client.pem&key=$dir/certs/client-key.pem"
  fi
  echo "test-servers/etcd.sh: $(etcd --version | head -1) on 127.0.0.1:$((base + 70)) (plain) and :$((base + 72)) (TLS), serving after $(( ($(date +%s%N) - t0) / 1000000 )) ms ($dir)" >&2
}

ipclock_start_test_etcd
