# shellcheck shell=bash
# Sourced by the tests that torture a cluster of servers while its leader
# is killed (zookeeper_ensemble_test.sh, etcd_cluster_test.sh): what they
# share around their own servers.

# cluster_torture_opt_in VAR WHAT: exits 77 (skipped) unless $VAR is 1.
cluster_torture_opt_in() {
  if [ "${!1:-}" != "1" ]; then
    echo "$2 runs only with $1=1: skipped" >&2
    exit 77
  fi
}

# cluster_torture_require SERVER_SCRIPT WHAT_IS_MISSING: exits 77 when the
# script's `available` fails, or 1 under CI=true, where a skip is a failure.
cluster_torture_require() {
  if ! "$1" available; then
    if [ "${CI:-}" = "true" ]; then
      echo "$2 under CI=true" >&2
      exit 1
    fi
    echo "$2: skipped" >&2
    exit 77
  fi
}

# cluster_torture_setup OPT_IN_VAR WHAT SERVER_SCRIPT WHAT_IS_MISSING
# DEFAULT_SECONDS TORTURE [SECONDS]: the script's start (opted in, its
# server there); sets torture, seconds, server (tools/test-servers/
# SERVER_SCRIPT) and base (the port base).
cluster_torture_setup() {
  cluster_torture_opt_in "$1" "$2"
  server="$here/tools/test-servers/$3"
  cluster_torture_require "$server" "$4"
  torture="$6"
  seconds="${7:-$5}"
  base="${IPCLOCK_TEST_PORT_BASE:-21300}"
}

ms() { echo $(( $(date +%s%N) / 1000000 )); }

# cluster_torture_ports_free PORT...: exits 1 if something already listens
# on one of them (on 127.0.0.1): the cluster would not be ours.
cluster_torture_ports_free() {
  local port
  for port in "$@"; do
    if { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
      exec 3<&- 3>&-
      echo "something already listens on 127.0.0.1:$port" >&2
      exit 1
    fi
  done
}

# cluster_torture_start DSN KILL_EVERY_MS: runs $torture on DSN for
# $seconds in the background, killing holders every KILL_EVERY_MS, its JSON
# to $out (in $dir); sets torture_pid.
cluster_torture_start() {
  out="$dir/torture.json"
  "$torture" --store "$1" --seconds "$seconds" --procs 4 --kill-every-ms "$2" --kill holders \
    --wait-bound-ms 60000 --json >"$out" 2>"$dir/torture.err" &
  torture_pid=$!
}

# cluster_torture_kill_leader LABEL NOUN BOUND_S KILL_CMD...: a third of
# the way into the torture run, finds the member that leads (the script's
# `leader [SKIP]` prints its number, 1..3, leaving out member SKIP), kills
# it with `KILL_CMD NUMBER`, and waits up to BOUND_S seconds for another
# member to lead, printing how long that took; then lets another third of
# the run pass. Sets `old` to the killed member's
# number; exits 1 if no leader is found, before or after.
cluster_torture_kill_leader() {
  local label="$1" noun="$2" bound_ms=$(( $3 * 1000 )) t_kill new=""
  shift 3
  sleep $(( seconds / 3 ))
  old="$(leader)" || { echo "no leader found" >&2; exit 1; }
  t_kill=$(ms)
  "$@" "$old"
  echo "$label: killed $noun $old (the leader) with SIGKILL"
  while [ -z "$new" ] && [ $(( $(ms) - t_kill )) -lt "$bound_ms" ]; do
    new="$(leader "$old")" || { new=""; sleep 0.05; }
  done
  if [ -z "$new" ]; then
    echo "no new leader within $(( bound_ms / 1000 )) s" >&2
    exit 1
  fi
  echo "$label: $noun $new was elected leader $(( $(ms) - t_kill )) ms after the kill"
  sleep $(( seconds / 3 ))
}

# cluster_torture_judge TORTURE_PID OUT_JSON ERR_FILE LABEL: waits for the
# torture run, prints its figures, and succeeds only if it found no
# violation (store errors while the leader is down are expected).
cluster_torture_judge() {
  local status=0 violations errors
  wait "$1" || status=$?
  cat "$2"
  if [ ! -s "$2" ]; then
    echo "torture printed nothing:" >&2
    cat "$3" >&2
    return 1
  fi
  violations="$(sed -n 's/.*"violations": \([0-9]*\).*/\1/p' "$2")"
  errors="$(sed -n 's/.*"errors": \([0-9]*\).*/\1/p' "$2")"
  echo "$4: violations $violations, store errors $errors (torture exit $status)"
  [ "$violations" = "0" ]
}
