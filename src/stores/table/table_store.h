// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table store (include/ipclock/stores/table_store.h): Symfony's PdoStore format
// over a TableBackend. The core is database-neutral; each database's
// backend, DSN reading and registry driver live in table_postgres.cc,
// table_mysql.cc and table_sqlite.cc, each compiled with its Meson feature.

#ifndef IPCLOCK_STORES_TABLE_STORE_H_
#define IPCLOCK_STORES_TABLE_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/stores/table_store.h"
#include "ipclock_config.h"
#include "stores/table/table_backend.h"

namespace ipclock {

// A table store named `name` ("postgresql", "mysql", "sqlite") over
// `backend`, once `backend->Check()` reached the database. Checks the names
// in `options` (InvalidArgument).
absl::StatusOr<std::shared_ptr<Store>> MakeTableStore(
    absl::string_view name, std::string describe, Scope scope,
    const TableStoreOptions& options, std::unique_ptr<TableBackend> backend);

// What a table store can do, on a database of `scope`.
Capabilities TableCapabilities(Scope scope);

// The end of a table store's DSN: `max_idle` (a server's pool; null for a
// store without one), then Symfony's table options (db_table, db_id_col,
// db_token_col, db_expiration_col) and gc_probability, then no option left
// over.
absl::Status TakeTableDsnTail(Dsn& dsn, size_t* max_idle, TableStoreOptions* table);

// The rows that have not expired, for `ipclock list`: the resource is known
// only as its SHA-256 unless the request names it. A missing table is an
// empty list (nothing was ever locked there).
// `store` describes the store for messages (HeldLocks::store).
absl::StatusOr<HeldLocks> ListTableLocks(TableBackend& backend, absl::string_view store,
                                         const TableStoreOptions& options,
                                         const ListRequest& request);

// The driver's `list` of the table store on one database, whose
// `kBackendFromDsn(dsn, &options)` reads the DSN into `Options` (its `table`
// among them) and makes the backend, and `kDescribe(options)` names the
// store. (Its `prepare` is PrepareFromOptions, core/options_driver.h, over
// the database's New...TableStore().)
template <typename Options, auto kBackendFromDsn, auto kDescribe>
absl::StatusOr<HeldLocks> ListTableLocksFromDsn(Dsn& dsn, const ListRequest& request) {
  Options options;
  auto backend = kBackendFromDsn(dsn, &options);
  if (!backend.ok()) return backend.status();
  return ListTableLocks(**backend, kDescribe(options), options.table, request);
}

// Its drivers and entries (core/store_entry.h), which the registry lists:
// one store, three databases; an entry's driver is null in a build without
// the database's library.
IPCLOCK_STORE_ENTRY(PostgresTable, Scope::kRemote, std::nullopt, "postgres", IPCLOCK_HAVE_POSTGRES,
                    "postgresql", "postgres", "pgsql");
IPCLOCK_STORE_ENTRY(MysqlTable, Scope::kRemote, std::nullopt, "mysql", IPCLOCK_HAVE_MYSQL,
                    "mysql", "mysql2");
IPCLOCK_STORE_ENTRY(SqliteTable, Scope::kLocal, std::nullopt, "sqlite", IPCLOCK_HAVE_SQLITE,
                    "sqlite", "sqlite3");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_TABLE_STORE_H_
