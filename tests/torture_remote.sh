#!/bin/sh
# Runs tools/torture against a server store whose DSN is in an environment
# variable, set by tools/test-servers/*.sh when tools/dev starts the server.
#
#   torture_remote.sh VAR TORTURE [torture args...]
#
# Without VAR the test is skipped (exit 77), except under CI=true, where a
# missing server is a failure: CI must not pass by skipping.
set -eu
var="$1"
torture="$2"
shift 2
eval "dsn=\${$var:-}"
if [ -z "$dsn" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "$var is not set under CI=true: the test server did not start" >&2
    exit 1
  fi
  echo "$var is not set: skipped (tools/dev test starts the server)" >&2
  exit 77
fi
exec "$torture" --store "$dsn" "$@"
