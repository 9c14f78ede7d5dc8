#!/bin/sh
# Runs tools/torture against a server store whose DSN is in an environment
# variable, set by tools/test-servers/*.sh when tools/dev starts the server.
#
#   torture_remote.sh VAR[?QUERY] TORTURE [torture args...]
#
# ?QUERY, if given, is appended to the DSN (store options such as a session
# timeout).
#
# Without VAR the test is skipped (exit 77), except under CI=true, where a
# missing server is a failure: CI must not pass by skipping.
set -eu
var="${1%%\?*}"
query=""
case "$1" in *\?*) query="?${1#*\?}" ;; esac
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
exec "$torture" --store "$dsn$query" "$@"
