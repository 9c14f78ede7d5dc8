# shellcheck shell=bash
# Sourced by tools/dev after the database servers' scripts (the scripts are
# sourced in name order, and this one sorts after mariadb.sh and
# postgres.sh): exports the table-store DSN of the PostgreSQL test server,
# whose script exports only its advisory DSN.
#
#   IPCLOCK_TEST_POSTGRES_TABLE  postgresql://...   (from IPCLOCK_TEST_POSTGRES)
#
# The MariaDB table DSN comes from mariadb.sh itself. SQLite needs no
# server: its tests use files in temp dirs.

if [ -n "${IPCLOCK_TEST_POSTGRES:-}" ]; then
  export IPCLOCK_TEST_POSTGRES_TABLE="postgresql://${IPCLOCK_TEST_POSTGRES#*://}"
fi
