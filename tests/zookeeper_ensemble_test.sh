#!/usr/bin/env bash
# A three-server ZooKeeper ensemble on loopback, tortured: tools/torture
# kills lock holders and waiters with SIGKILL while this script kills one
# server of the ensemble with SIGKILL (the leader, so that the others must
# elect a new one), then starts it again. Passes when no two holders ever
# overlapped, no update was lost and no waiter starved (torture's
# violations); store errors while the leader is down are expected, counted
# and printed, not failures.
#
#   zookeeper_ensemble_test.sh TORTURE [SECONDS]     (default 40)
#
# Ports: $IPCLOCK_TEST_PORT_BASE+41..43 for clients, +44..46 quorum,
# +47..49 election (tools/test-servers/ports.sh). Skipped (77) without Java
# or the ZooKeeper jars, except under CI=true. Prints how long the ensemble
# took to start, how long the election took, and torture's figures.
#
# It takes about a minute and starts three JVMs, so `meson test` runs it
# only when asked (otherwise it skips):
#
#   IPCLOCK_TEST_ENSEMBLE=1 meson test -C build --suite zookeeper-ensemble
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$here/tests/cluster_torture.sh"
cluster_torture_setup IPCLOCK_TEST_ENSEMBLE "the ensemble test (it takes a minute)" \
  zookeeper-server "no java or ZooKeeper jars (apt-get install zookeeperd)" 40 "$@"

dir="$(mktemp -d /tmp/ipclock-ensemble-XXXXXX)"
cleanup() {
  for i in 1 2 3; do "$server" kill "$dir/s$i" || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

members=""
for i in 1 2 3; do
  members+="${members:+,}$i=$((base + 40 + i)):$((base + 43 + i)):$((base + 46 + i))"
done
cluster_torture_ports_free $((base + 41)) $((base + 42)) $((base + 43))

t0=$(ms)
for i in 1 2 3; do
  "$server" start "$dir/s$i" $((base + 40 + i)) "$i" "$members"
done
for i in 1 2 3; do
  "$server" wait "$dir/s$i" $((base + 40 + i)) 120
done
echo "ensemble: three servers serving after $(( $(ms) - t0 )) ms"

dsn="zookeeper://127.0.0.1:$((base + 41)),127.0.0.1:$((base + 42)),127.0.0.1:$((base + 43))/ipclock-ensemble?session_timeout=2&secret=none"
cluster_torture_start "$dsn" 4000

# The server that leads now (1..3), from its answer to `srvr`, leaving out
# server $1 if given.
leader() {
  local i
  for i in 1 2 3; do
    [ -n "${1:-}" ] && [ "$i" = "$1" ] && continue
    if { exec 3<>"/dev/tcp/127.0.0.1/$((base + 40 + i))" && printf srvr >&3 && timeout 2 cat <&3; } 2>/dev/null |
        grep -q '^Mode: leader'; then
      exec 3<&- 3>&- 2>/dev/null || true
      echo "$i"
      return 0
    fi
    exec 3<&- 3>&- 2>/dev/null || true
  done
  return 1
}
kill_server() { "$server" kill "$dir/s$1"; }
cluster_torture_kill_leader ensemble server 120 kill_server
t_back=$(ms)
"$server" start "$dir/s$old" $((base + 40 + old)) "$old" "$members"
"$server" wait "$dir/s$old" $((base + 40 + old)) 120
echo "ensemble: server $old rejoined after $(( $(ms) - t_back )) ms"

cluster_torture_judge "$torture_pid" "$out" "$dir/torture.err" ensemble
