// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The SQL of Symfony's PdoStore (Store/PdoStore.php, DatabaseTableTrait.php
// in symfony/lock 5.4), per database, with the table and column names of
// the options. Values are never quoted user text: the id is hex, the token
// base64 (checked by the caller) and the lease a number, so each statement
// is plain text that every database takes as it is.

#ifndef IPCLOCK_STORES_TABLE_SQL_H_
#define IPCLOCK_STORES_TABLE_SQL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ipclock/stores/table_store.h"
#include "stores/table/table_backend.h"

namespace ipclock {

// InvalidArgument unless every name is an SQL identifier that needs no
// quoting (letters, digits and '_', not starting with a digit, at most 64
// characters; the table may be schema.table): names go into the SQL text as
// they are, as Symfony puts them.
absl::Status CheckTableNames(const TableStoreOptions& names);

// The server's current Unix time, in whole seconds, as Symfony reads it.
absl::string_view NowSql(TableDialect dialect);

// Symfony's CREATE TABLE for `dialect`.
std::string CreateTableSql(TableDialect dialect, const TableStoreOptions& n);

// INSERT of a fresh row that expires `ttl_seconds` from the server's now.
std::string InsertSql(TableDialect dialect, const TableStoreOptions& n,
                      absl::string_view id, absl::string_view token, int64_t ttl_seconds);
// The take-over and refresh: sets the expiry and our token where the row is
// ours or has expired.
std::string TakeOverSql(TableDialect dialect, const TableStoreOptions& n,
                        absl::string_view id, absl::string_view token, int64_t ttl_seconds);
std::string DeleteSql(const TableStoreOptions& n, absl::string_view id,
                      absl::string_view token);
// The release of a holder that died (StoreInterface::ReleaseAsDead): our row is left
// expired, so that the next holder takes it over and is told.
std::string ExpireSql(const TableStoreOptions& n, absl::string_view id,
                      absl::string_view token);
// SELECT 1 where the row is ours and not expired.
std::string ExistsSql(TableDialect dialect, const TableStoreOptions& n,
                      absl::string_view id, absl::string_view token);
// The id and token of each of the rows `ids` that has not expired: one
// statement for the checks of every lock a store holds.
std::string HeldRowsSql(TableDialect dialect, const TableStoreOptions& n,
                        const std::vector<std::string>& ids);
// DELETE of every row that expired at least kPruneGraceSeconds ago.
inline constexpr int64_t kPruneGraceSeconds = 3600;
std::string PruneSql(TableDialect dialect, const TableStoreOptions& n);
// The rows that have not expired (all, or `id`'s): id, seconds left.
std::string ListSql(TableDialect dialect, const TableStoreOptions& n,
                    const std::optional<std::string>& id);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_TABLE_SQL_H_
