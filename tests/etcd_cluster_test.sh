#!/usr/bin/env bash
# A three-member etcd cluster on loopback, tortured: tools/torture kills
# lock holders with SIGKILL while this script kills the cluster's leader
# with SIGKILL (the other two must elect a new one), then starts it again.
# The torture's DSN names all three members, so its clients move on to
# another member when theirs dies. Passes when no two holders ever
# overlapped, no update was lost and no waiter starved (torture's
# violations); store errors while the leader is down are expected, counted
# and printed, not failures.
#
#   etcd_cluster_test.sh TORTURE [SECONDS]     (default 30)
#
# Ports: $IPCLOCK_TEST_PORT_BASE+74..76 for clients, +77..79 for peers
# (tools/test-servers/ports.sh). Skipped (77) without etcd, except under
# CI=true. Prints how long the cluster took to start and to elect a new
# leader, and torture's figures.
#
# It takes about 40 s, so `meson test` runs it only when asked (otherwise
# it skips):
#
#   IPCLOCK_TEST_CLUSTER=1 meson test -C build --suite etcd-cluster
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$here/tests/cluster_torture.sh"
cluster_torture_setup IPCLOCK_TEST_CLUSTER "the cluster test (it takes 40 s)" etcd-server \
  "no etcd (apt-get install etcd-server etcd-client)" 30 "$@"

dir="$(mktemp -d /tmp/ipclock-etcd-cluster-XXXXXX)"
cleanup() {
  for i in 1 2 3; do "$server" kill "$dir/m$i" purge || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

client() { echo $((base + 73 + $1)); }
peer() { echo $((base + 76 + $1)); }
members=""
for i in 1 2 3; do
  members+="${members:+,}m$i=$(peer "$i")"
done
cluster_torture_ports_free "$(client 1)" "$(client 2)" "$(client 3)"

t0=$(ms)
for i in 1 2 3; do
  "$server" start "$dir/m$i" "m$i" "$(client "$i")" "$(peer "$i")" "$members"
done
for i in 1 2 3; do
  "$server" wait "$dir/m$i" "$(client "$i")" 60
done
echo "cluster: three members serving after $(( $(ms) - t0 )) ms"

endpoints="127.0.0.1:$(client 1),127.0.0.1:$(client 2),127.0.0.1:$(client 3)"
# The member that is leader now (1..3), from `etcdctl endpoint status`
# (its fifth field says whether that member leads).
leader() {
  local i
  for i in 1 2 3; do
    [ -n "${1:-}" ] && [ "$i" = "$1" ] && continue
    if ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$(client "$i")" --command-timeout 1s \
        endpoint status 2>/dev/null | awk -F', ' '{print $5}' | grep -qx true; then
      echo "$i"
      return 0
    fi
  done
  return 1
}

dsn="etcd://$endpoints/ipclock-cluster?ttl=2&timeout=2&connect_timeout=1"
cluster_torture_start "$dsn" 3000
kill_member() { "$server" kill "$dir/m$1"; }
cluster_torture_kill_leader cluster member 60 kill_member
t_back=$(ms)
"$server" restart "$dir/m$old" "m$old" "$(client "$old")" "$(peer "$old")" "$members"
"$server" wait "$dir/m$old" "$(client "$old")" 60
echo "cluster: member $old rejoined after $(( $(ms) - t_back )) ms"

cluster_torture_judge "$torture_pid" "$out" "$dir/torture.err" cluster
