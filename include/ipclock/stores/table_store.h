// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/table_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
//
// Locks kept as rows of a database table in the format of Symfony Lock's
// PdoStore and DoctrineDbalStore, on PostgreSQL, MySQL/MariaDB or SQLite: a
// PHP application using either store and a program using ipclock exclude
// each other on the same table. Each database is its own Meson feature
// (`postgres`: libpq, `mysql`: MariaDB Connector/C, `sqlite`: libsqlite3);
// a DSN of a database this build left out is Unimplemented.
//
// DSNs, as Symfony's StoreFactory reads them (doc/stores.md, "SQL tables"):
//
//   postgresql://user:password@host:5432/db    also postgres://, pgsql://
//   pgsql:host=H;port=P;dbname=D?user=U&password=P        (PDO's form)
//   mysql://user:password@host:3306/db         also mysql2://
//   mysql://user:password@localhost/db?unix_socket=/run/mysqld/mysqld.sock
//   mysql:host=H;port=P;dbname=D?user=U&password=P        (PDO's form)
//   sqlite:///ABSOLUTE/PATH/locks.db           also sqlite3://
//   sqlite:/ABSOLUTE/PATH/locks.db                        (PDO's form)
//
// In PDO's forms the credentials are query options, as PDO takes them apart
// from its DSN; a password inside the PDO part is refused, since messages
// could not redact it. SQLite paths must be absolute. Doctrine reads
// `sqlite:///var/app.db` as the relative path "var/app.db" and needs
// `sqlite:////var/app.db` for an absolute one; here both name /var/app.db,
// so write the four-slash form to share a database with a Doctrine DSN.
//
// Query options of every database: `db_table`, `db_id_col`, `db_token_col`,
// `db_expiration_col` (Symfony's option names and defaults: lock_keys,
// key_id, key_token, key_expiration; letters, digits and '_', and the table
// may be `schema.table`), `gc_probability` (0.01). PostgreSQL: `max_idle`,
// `connect_timeout` and libpq's connection keywords, as for
// postgresql+advisory://. MySQL: `max_idle` and the connection options of
// mysql_store.h. SQLite: `busy_timeout=SECONDS` (5).
//
// The format, as Symfony's SQL has it:
//   * one row per held lock in table lock_keys: key_id = lowercase hex
//     SHA-256 of the resource (the primary key), key_token = the owner's
//     44-character base64 token, key_expiration = the server's Unix time
//     (PostgreSQL CAST(EXTRACT(epoch FROM NOW()) AS INT), MySQL
//     UNIX_TIMESTAMP(), SQLite strftime('%s','now')) plus the lease;
//   * acquire: INSERT the row; on a duplicate key, take the row over with
//     UPDATE ... WHERE key_id = ? AND (key_token = ours OR key_expiration <=
//     now), which matches only our own row or an expired one; refresh: the
//     same UPDATE; release: DELETE WHERE key_id and key_token match; held:
//     SELECT 1 WHERE key_id and key_token match and key_expiration > now;
//   * the table is created on first use when missing, with Symfony's DDL for
//     the database (two processes creating it at once is harmless).
// Leases are whole seconds on the server's clock: the row gets the lease
// rounded up plus one second, so that the server's whole-second clock never
// ends a lease before the holder's own count of it ends; a dead holder's
// lock thus lasts up to two seconds past its TTL. All users of one database
// share the server's clock, except on SQLite, where each process reads its
// own host's clock (one host: the same clock; see below).
//
// Expired rows are collected as Symfony collects them, after a successful
// acquisition, with probability `gc_probability`, but only those that
// expired an hour ago or more (Symfony's collection takes every expired
// row): an expired row excludes nobody, a new holder takes it over, and
// until then it is what tells that holder of a death (below).
//
// Owner death. A release deletes its row, so a row whose lease ran out was
// never released: its holder died (or stopped renewing) holding the lock.
// A holder that takes such a row over is told (`previous_owner_died()`),
// whether the dead holder was ipclock or PHP. What it cannot be told of: a
// row that was collected before it came (by PHP's collection, which does
// not wait an hour, or by ipclock's after an hour), or deleted by hand.
// `Lock::ReleaseAsDead()` leaves its row expired instead of deleting it.
//
// Capabilities: expiring (the lease is `LockOptions::ttl`, at least 1 s, and
// the watch of lock_watch.h renews it at a third of its length),
// serializable (a lock is its row and token, which another process may
// refresh or release), scope remote (SQLite: local). Not blocking: a wait
// polls, first after 10 ms and then doubling to 250 ms, with jitter, until
// the deadline; there is nothing on the server to sleep on. Owner death
// (above). Not shared, no fencing. `CheckHeld` (Lock::CheckAcquired) is one
// SELECT: the row still carries our token and has not expired; a release
// that finds its row gone (expired and taken over, or deleted) is Aborted.
//
// SQLite: the database file is opened in WAL mode (readers never wait for
// the writer) with synchronous=NORMAL (a power cut may lose the last
// acquisitions, whose holders died with the host) and a busy timeout for
// the moments another process writes. Its files (the database, -wal, -shm)
// are created with this process's umask: processes of other users need
// group-writable files in a group-writable dir. What a database on NFS (or
// any network filesystem) cannot promise: exclusion at all. SQLite's locks
// there are the NFS lock manager's, which many setups turn off or get
// wrong; WAL mode needs shared memory that exists only on one host; and the
// lease is each host's own clock. Keep the file on a local filesystem and
// every user on the host that has it; for several hosts, use a server.

#ifndef IPCLOCK_TABLE_STORE_H_
#define IPCLOCK_TABLE_STORE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/stores/mysql_store.h"
#include "ipclock/store.h"

namespace ipclock {

struct TableStoreOptions {
  // Symfony's db_table, db_id_col, db_token_col, db_expiration_col.
  std::string table = "lock_keys";
  std::string id_column = "key_id";
  std::string token_column = "key_token";
  std::string expiration_column = "key_expiration";
  // The chance, from 0 to 1, that an acquisition also deletes every
  // expired row.
  double gc_probability = 0.01;
};

// PostgreSQL through libpq. `conninfo` as for PostgresStoreOptions.
struct PostgresTableStoreOptions {
  std::vector<std::pair<std::string, std::string>> conninfo;
  size_t max_idle = 4;
  TableStoreOptions table;
};
absl::StatusOr<std::shared_ptr<Store>> NewPostgresTableStore(
    const PostgresTableStoreOptions& options);

// MySQL or MariaDB through MariaDB Connector/C.
struct MysqlTableStoreOptions {
  MysqlConnectionOptions connection;
  size_t max_idle = 4;
  TableStoreOptions table;
};
absl::StatusOr<std::shared_ptr<Store>> NewMysqlTableStore(
    const MysqlTableStoreOptions& options);

// SQLite: one database file on a local filesystem of this host.
struct SqliteTableStoreOptions {
  std::string path;  // absolute; created with its table when missing
  absl::Duration busy_timeout = absl::Seconds(5);
  TableStoreOptions table;
};
absl::StatusOr<std::shared_ptr<Store>> NewSqliteTableStore(
    const SqliteTableStoreOptions& options);

}  // namespace ipclock

#endif  // IPCLOCK_TABLE_STORE_H_
