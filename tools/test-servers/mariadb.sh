# shellcheck shell=bash
# Sourced by tools/dev before the suites run: starts a throwaway MariaDB
# server for the MySQL stores' tests and exports its DSNs.
#
#   IPCLOCK_TEST_MYSQL          mysql+advisory://ipclock:PW@127.0.0.1:BASE+20/ipclock_test
#   IPCLOCK_TEST_MYSQL_SOCKET   the same over the server's Unix socket
#                               (mysql+advisory://ipclock:PW@localhost/ipclock_test?unix_socket=...)
#   IPCLOCK_TEST_MYSQL_TABLE    mysql://ipclock:PW@127.0.0.1:BASE+20/ipclock_test
#                               (the table store)
#   IPCLOCK_TEST_MYSQL_RESTART  a script that restarts the server (the tests
#                               of a lost connection run it)
#   IPCLOCK_TEST_MYSQL_CA       the server's self-signed TLS certificate
#                               (for 127.0.0.1), when openssl made one
#
# BASE is $IPCLOCK_TEST_PORT_BASE (tools/test-servers/ports.sh).
#
#   - Debian's mariadb-server binaries, never the system service: a data dir
#     made by mariadb-install-db in a fresh temp dir, mariadbd on
#     127.0.0.1:BASE+20 and a Unix socket in that dir, reading no option
#     file (--no-defaults).
#   - As root the server runs as the `mysql` user; otherwise as the caller.
#   - Kept lean for CI: a 16 MB buffer pool, a 4 MB redo log, no log flush
#     at commit, no binary log, performance_schema off. The
#     metadata_lock_info plugin is loaded so that `ipclock list` can read
#     the named locks.
#   - The user `ipclock` (all privileges: the tests KILL other sessions)
#     logs in with a random password, over TCP and the socket.
#   - The stop (mariadb-admin shutdown, then the pidfile) and the removal of
#     the dir go on cleanup_cmds.
#
# Without the server binaries it says so and exports nothing: the suites
# then skip, except under CI=true.

ipclock_start_test_mariadb() {
  local port=$((IPCLOCK_TEST_PORT_BASE + 20))
  if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
    echo "test-servers/mariadb.sh: no mariadbd (apt-get install mariadb-server); its tests will be skipped" >&2
    return 0
  fi
  local mariadbd
  mariadbd="$(command -v mariadbd || echo /usr/sbin/mariadbd)"
  if ! command -v mariadb-install-db >/dev/null 2>&1; then
    echo "test-servers/mariadb.sh: no mariadb-install-db; its tests will be skipped" >&2
    return 0
  fi
  if ipclock_port_taken "$port"; then
    echo "test-servers/mariadb.sh: something already listens on 127.0.0.1:$port; not starting a second server" >&2
    return 1
  fi

  local started_ns
  started_ns=$(date +%s%N)
  local dir
  dir="$(mktemp -d /tmp/ipclock-mariadb-XXXXXX)"
  local user_args=()
  if [ "$(id -u)" -eq 0 ]; then
    chown mysql: "$dir"
    user_args=(--user=mysql)
  fi
  # Registered first, so that a failure below still removes the dir.
  cleanup_cmds+=("mariadb-admin --no-defaults -uroot --socket='$dir/mysqld.sock' shutdown >/dev/null 2>&1 || { [ -f '$dir/mysqld.pid' ] && kill \"\$(cat '$dir/mysqld.pid')\" 2>/dev/null; sleep 1; }; rm -rf '$dir'")

  # TLS with a throwaway self-signed certificate for 127.0.0.1, when
  # openssl is there, so that the ssl_mode options are tested for real.
  local tls_args=""
  if command -v openssl >/dev/null 2>&1 &&
     openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
       -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
       -keyout "$dir/key.pem" -out "$dir/cert.pem" >/dev/null 2>&1; then
    [ "${#user_args[@]}" -eq 0 ] || chown mysql: "$dir/key.pem" "$dir/cert.pem"
    tls_args="--ssl-cert=$dir/cert.pem --ssl-key=$dir/key.pem"
  fi
  local sizes=(--innodb-buffer-pool-size=16M --innodb-log-file-size=4M)
  if ! mariadb-install-db --no-defaults "${user_args[@]}" --datadir="$dir/data" \
      --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
      "${sizes[@]}" >"$dir/install.log" 2>&1; then
    cat "$dir/install.log" >&2
    return 1
  fi

  # The server's command line, kept in a script so that tests can restart
  # the server (IPCLOCK_TEST_MYSQL_RESTART) exactly as it was started.
  cat >"$dir/start.sh" <<EOF
#!/bin/sh
"$mariadbd" --no-defaults ${user_args[*]} --datadir="$dir/data" \\
  --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \\
  --skip-networking=0 --bind-address=127.0.0.1 --port=$port --skip-name-resolve \\
  ${sizes[*]} --innodb-flush-log-at-trx-commit=0 --skip-log-bin \\
  --performance-schema=OFF --plugin-load-add=metadata_lock_info $tls_args >/dev/null 2>&1 &
i=0
while [ \$i -lt 300 ]; do
  mariadb-admin --no-defaults -uroot --socket="$dir/mysqld.sock" ping >/dev/null 2>&1 && exit 0
  sleep 0.05
  i=\$((i + 1))
done
echo "mariadbd did not answer within 15 s:" >&2
tail -20 "$dir/error.log" >&2
exit 1
EOF
  cat >"$dir/restart.sh" <<EOF
#!/bin/sh
mariadb-admin --no-defaults -uroot --socket="$dir/mysqld.sock" shutdown >/dev/null 2>&1
exec "$dir/start.sh"
EOF
  chmod 755 "$dir/start.sh" "$dir/restart.sh"
  if ! "$dir/start.sh"; then
    return 1
  fi

  local password
  password="$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
  if ! mariadb --no-defaults -uroot --socket="$dir/mysqld.sock" -e "
      CREATE DATABASE ipclock_test;
      CREATE USER 'ipclock'@'127.0.0.1' IDENTIFIED BY '$password';
      CREATE USER 'ipclock'@'localhost' IDENTIFIED BY '$password';
      GRANT ALL PRIVILEGES ON *.* TO 'ipclock'@'127.0.0.1';
      GRANT ALL PRIVILEGES ON *.* TO 'ipclock'@'localhost';"; then
    return 1
  fi
  export IPCLOCK_TEST_MYSQL="mysql+advisory://ipclock:$password@127.0.0.1:$port/ipclock_test"
  export IPCLOCK_TEST_MYSQL_SOCKET="mysql+advisory://ipclock:$password@localhost/ipclock_test?unix_socket=$dir/mysqld.sock"
  export IPCLOCK_TEST_MYSQL_TABLE="mysql://ipclock:$password@127.0.0.1:$port/ipclock_test"
  export IPCLOCK_TEST_MYSQL_RESTART="$dir/restart.sh"
  if [ -n "$tls_args" ]; then
    export IPCLOCK_TEST_MYSQL_CA="$dir/cert.pem"
  fi
  local took_ms=$((($(date +%s%N) - started_ns) / 1000000))
  echo "test-servers/mariadb.sh: MariaDB $("$mariadbd" --version | awk '{print $3}') on 127.0.0.1:$port ($dir), ready in $took_ms ms" >&2
}

ipclock_start_test_mariadb
