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

ms() { echo $(( $(date +%s%N) / 1000000 )); }

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
