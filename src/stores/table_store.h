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
#include "stores/table_backend.h"

namespace ipclock {

// A table store named `name` ("postgresql", "mysql", "sqlite") over
// `backend`, once `backend->Check()` reached the database. Checks the names
// in `options` (InvalidArgument).
absl::StatusOr<std::shared_ptr<Store>> MakeTableStore(
    absl::string_view name, std::string describe, Scope scope,
    const TableStoreOptions& options, std::unique_ptr<TableBackend> backend);

// What a table store can do, on a database of `scope`.
Capabilities TableCapabilities(Scope scope);

// Takes Symfony's table options (db_table, db_id_col, db_token_col,
// db_expiration_col) and gc_probability from `dsn`.
absl::StatusOr<TableStoreOptions> TakeTableOptions(Dsn& dsn);

// The rows that have not expired, for `ipclock list`: the resource is known
// only as its SHA-256 unless the request names it. A missing table is an
// empty list (nothing was ever locked there).
// `store` describes the store for messages (HeldLocks::store).
absl::StatusOr<HeldLocks> ListTableLocks(TableBackend& backend, absl::string_view store,
                                         const TableStoreOptions& options,
                                         const ListRequest& request);

// The drivers of its entries; null in a build without the database's
// library.
#if IPCLOCK_HAVE_POSTGRES
extern const StoreDriver kPostgresTableDriver;
inline constexpr const StoreDriver* kPostgresTableDriverIfBuilt = &kPostgresTableDriver;
#else
inline constexpr const StoreDriver* kPostgresTableDriverIfBuilt = nullptr;
#endif
#if IPCLOCK_HAVE_MYSQL
extern const StoreDriver kMysqlTableDriver;
inline constexpr const StoreDriver* kMysqlTableDriverIfBuilt = &kMysqlTableDriver;
#else
inline constexpr const StoreDriver* kMysqlTableDriverIfBuilt = nullptr;
#endif
#if IPCLOCK_HAVE_SQLITE
extern const StoreDriver kSqliteTableDriver;
inline constexpr const StoreDriver* kSqliteTableDriverIfBuilt = &kSqliteTableDriver;
#else
inline constexpr const StoreDriver* kSqliteTableDriverIfBuilt = nullptr;
#endif

// Their entries: one store, three databases.
inline constexpr absl::string_view kPostgresTableSchemes[] = {"postgresql", "postgres", "pgsql"};
inline constexpr StoreEntry kPostgresTableEntry = {
    "postgresql", kPostgresTableSchemes, Scope::kRemote, std::nullopt, "postgres",
    kPostgresTableDriverIfBuilt};
inline constexpr absl::string_view kMysqlTableSchemes[] = {"mysql", "mysql2"};
inline constexpr StoreEntry kMysqlTableEntry = {
    "mysql", kMysqlTableSchemes, Scope::kRemote, std::nullopt, "mysql", kMysqlTableDriverIfBuilt};
inline constexpr absl::string_view kSqliteTableSchemes[] = {"sqlite", "sqlite3"};
inline constexpr StoreEntry kSqliteTableEntry = {
    "sqlite", kSqliteTableSchemes, Scope::kLocal, std::nullopt, "sqlite",
    kSqliteTableDriverIfBuilt};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_TABLE_STORE_H_
