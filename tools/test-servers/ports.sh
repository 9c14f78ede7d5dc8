# shellcheck shell=bash
# Sourced by tools/dev before the server scripts: the loopback ports of the
# test servers. They lie below the kernel's ephemeral range (32768-60999 by
# default), so no client socket can take one before its server binds it and
# no host setting needs changing. It also defines the two checks the
# server scripts share (below).
#
#   IPCLOCK_TEST_PORT_BASE   default 21300; set it to run two suites at once
#     BASE+0..3    Redis (redis.sh)
#     BASE+10      PostgreSQL (postgres.sh)
#     BASE+20..29  MariaDB
#     BASE+30..39  memcached
#     BASE+40..69  ZooKeeper (client, quorum and election ports)
#     BASE+70..73  etcd (a plain member, a TLS one: client and peer ports)
#     BASE+74..79  etcd's three-member cluster (client and peer ports)
#     BASE+90..98  servers that tests start themselves
: "${IPCLOCK_TEST_PORT_BASE:=21300}"
export IPCLOCK_TEST_PORT_BASE
ipclock_ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
if [ "$((IPCLOCK_TEST_PORT_BASE + 99))" -ge "$ipclock_ephemeral_low" ]; then
  echo "test-servers/ports.sh: IPCLOCK_TEST_PORT_BASE=$IPCLOCK_TEST_PORT_BASE reaches the ephemeral port range (from $ipclock_ephemeral_low); pick a lower base" >&2
  return 1
fi

# ipclock_port_taken PORT: true if something listens on 127.0.0.1:PORT
# already (a server of another suite, or a stranger).
ipclock_port_taken() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# ipclock_server_available SERVER MISSING: true if the script SERVER
# (tools/test-servers/NAME-server) can run its server here; otherwise says
# MISSING (what to install) and that NAME's tests will be skipped.
ipclock_server_available() {
  "$1" available && return 0
  local name=${1##*/}
  echo "test-servers/${name%-server}.sh: $2; its tests will be skipped" >&2
  return 1
}
