# shellcheck shell=bash
# Sourced by tools/dev before the suites run: starts a throwaway PostgreSQL
# cluster for the postgres store's tests and exports its DSN as
# IPCLOCK_TEST_POSTGRES.
#
#   - Debian's server binaries (postgresql package), never the system
#     service: the cluster lives in a fresh temp dir and listens on
#     127.0.0.1:BASE+10 (tools/test-servers/ports.sh) and a Unix socket in
#     that dir only.
#   - initdb refuses to run as root, so as root the cluster belongs to the
#     `postgres` user (runuser).
#   - The role `ipclock` (a superuser: the tests end other sessions with
#     pg_terminate_backend) logs in over TCP with a random password
#     (scram-sha-256), so that a wrong password is a real failure.
#   - The stop and the removal of the dir go on cleanup_cmds.
#
# Without the server binaries it says so and exports nothing: the suites
# then skip, except under CI=true.

ipclock_start_test_postgres() {
  local port=$((IPCLOCK_TEST_PORT_BASE + 10))
  local bindir=""
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && bindir="$d"
  done
  if [ -z "$bindir" ]; then
    echo "test-servers/postgres.sh: no PostgreSQL server binaries (apt-get install postgresql); its tests will be skipped" >&2
    return 0
  fi
  local runas=()
  if [ "$(id -u)" -eq 0 ]; then
    # From /: PostgreSQL's programs go back to the dir they started in,
    # which `postgres` may not enter (root's home).
    runas=(env -C / runuser -u postgres --)
  fi
  if "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" 2>/dev/null; then
    echo "test-servers/postgres.sh: something already listens on 127.0.0.1:$port; not starting a second server" >&2
    return 1
  fi

  local dir
  dir="$(mktemp -d /tmp/ipclock-pg-XXXXXX)"
  [ "${#runas[@]}" -eq 0 ] || chown postgres: "$dir"
  local password
  password="$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
  (umask 077 && printf '%s\n' "$password" >"$dir/pwfile")
  [ "${#runas[@]}" -eq 0 ] || chown postgres: "$dir/pwfile"

  # Registered first, so that a failure below still removes the dir.
  cleanup_cmds+=("${runas[*]} '$bindir/pg_ctl' -D '$dir/data' -m fast -w stop >/dev/null 2>&1; rm -rf '$dir'")

  if ! "${runas[@]}" "$bindir/initdb" -D "$dir/data" -U ipclock \
      --pwfile="$dir/pwfile" --auth-host=scram-sha-256 --auth-local=trust \
      -E UTF8 --no-locale >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    return 1
  fi
  rm -f "$dir/pwfile"
  if ! "${runas[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off" \
      start >/dev/null; then
    cat "$dir/server.log" >&2
    return 1
  fi
  local i
  for i in $(seq 1 100); do
    "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" && break
    sleep 0.1
  done
  if ! PGPASSWORD="$password" "$bindir/createdb" -h 127.0.0.1 -p "$port" \
      -U ipclock ipclock_test; then
    return 1
  fi
  export IPCLOCK_TEST_POSTGRES="postgresql+advisory://ipclock:$password@127.0.0.1:$port/ipclock_test"
  echo "test-servers/postgres.sh: PostgreSQL $("$bindir/postgres" -V | awk '{print $3}') on 127.0.0.1:$port ($dir)" >&2
}

ipclock_start_test_postgres
