// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/table/table_sql.h"

#include <iterator>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/store_errors.h"

namespace ipclock {

namespace {

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || s.size() > 64 || absl::ascii_isdigit(s[0])) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

absl::Status BadName(absl::string_view option, absl::string_view value) {
  return ConfigurationError(absl::StrCat(
      "ipclock: table store: ", option, "=", value,
      ": expected an SQL name of letters, digits and '_' (not starting with a "
      "digit, at most 64 characters)",
      option == "db_table" ? ", or schema.table" : ""));
}

}  // namespace

absl::Status CheckTableNames(const TableStoreOptions& n) {
  const std::vector<absl::string_view> parts = absl::StrSplit(n.table, '.');
  if (parts.size() > 2) return BadName("db_table", n.table);
  for (absl::string_view p : parts) {
    if (!IsIdentifier(p)) return BadName("db_table", n.table);
  }
  if (!IsIdentifier(n.id_column)) return BadName("db_id_col", n.id_column);
  if (!IsIdentifier(n.token_column)) return BadName("db_token_col", n.token_column);
  if (!IsIdentifier(n.expiration_column)) {
    return BadName("db_expiration_col", n.expiration_column);
  }
  return absl::OkStatus();
}

absl::string_view NowSql(TableDialect dialect) {
  static constexpr absl::string_view kNow[] = {  // by TableDialect
      "CAST(EXTRACT(epoch FROM NOW()) AS INT)", "UNIX_TIMESTAMP()",
      "strftime('%s','now')"};
  static_assert(std::size(kNow) ==
                static_cast<size_t>(TableDialect::kSqlite) + 1);
  return kNow[static_cast<size_t>(dialect)];
}

std::string CreateTableSql(TableDialect dialect, const TableStoreOptions& n) {
  switch (dialect) {
    case TableDialect::kPgsql:
      return absl::StrCat("CREATE TABLE ", n.table, " (", n.id_column,
                          " VARCHAR(64) NOT NULL PRIMARY KEY, ", n.token_column,
                          " VARCHAR(64) NOT NULL, ", n.expiration_column, " INTEGER)");
    case TableDialect::kMysql:
      return absl::StrCat("CREATE TABLE ", n.table, " (", n.id_column,
                          " VARCHAR(64) NOT NULL PRIMARY KEY, ", n.token_column,
                          " VARCHAR(44) NOT NULL, ", n.expiration_column,
                          " INTEGER UNSIGNED NOT NULL) COLLATE utf8mb4_bin, ENGINE = InnoDB");
    case TableDialect::kSqlite:
      return absl::StrCat("CREATE TABLE ", n.table, " (", n.id_column,
                          " TEXT NOT NULL PRIMARY KEY, ", n.token_column, " TEXT NOT NULL, ",
                          n.expiration_column, " INTEGER)");
  }
  return "";
}

std::string InsertSql(TableDialect dialect, const TableStoreOptions& n,
                      absl::string_view id, absl::string_view token, int64_t ttl_seconds) {
  return absl::StrCat("INSERT INTO ", n.table, " (", n.id_column, ", ", n.token_column, ", ",
                      n.expiration_column, ") VALUES ('", id, "', '", token, "', ",
                      NowSql(dialect), " + ", ttl_seconds, ")");
}

std::string TakeOverSql(TableDialect dialect, const TableStoreOptions& n,
                        absl::string_view id, absl::string_view token, int64_t ttl_seconds) {
  return absl::StrCat("UPDATE ", n.table, " SET ", n.expiration_column, " = ",
                      NowSql(dialect), " + ", ttl_seconds, ", ", n.token_column, " = '",
                      token, "' WHERE ", n.id_column, " = '", id, "' AND (",
                      n.token_column, " = '", token, "' OR ", n.expiration_column,
                      " <= ", NowSql(dialect), ")");
}

std::string DeleteSql(const TableStoreOptions& n, absl::string_view id,
                      absl::string_view token) {
  return absl::StrCat("DELETE FROM ", n.table, " WHERE ", n.id_column, " = '", id,
                      "' AND ", n.token_column, " = '", token, "'");
}

std::string ExpireSql(const TableStoreOptions& n, absl::string_view id,
                      absl::string_view token) {
  return absl::StrCat("UPDATE ", n.table, " SET ", n.expiration_column, " = 0 WHERE ",
                      n.id_column, " = '", id, "' AND ", n.token_column, " = '", token, "'");
}

std::string ExistsSql(TableDialect dialect, const TableStoreOptions& n,
                      absl::string_view id, absl::string_view token) {
  return absl::StrCat("SELECT 1 FROM ", n.table, " WHERE ", n.id_column, " = '", id,
                      "' AND ", n.token_column, " = '", token, "' AND ",
                      n.expiration_column, " > ", NowSql(dialect));
}

std::string HeldRowsSql(TableDialect dialect, const TableStoreOptions& n,
                        const std::vector<std::string>& ids) {
  std::string sql = absl::StrCat("SELECT ", n.id_column, ", ", n.token_column, " FROM ",
                                 n.table, " WHERE ", n.expiration_column, " > ",
                                 NowSql(dialect), " AND ", n.id_column, " IN (");
  for (size_t i = 0; i < ids.size(); ++i) {
    absl::StrAppend(&sql, i == 0 ? "'" : ", '", ids[i], "'");
  }
  absl::StrAppend(&sql, ")");
  return sql;
}

std::string PruneSql(TableDialect dialect, const TableStoreOptions& n) {
  return absl::StrCat("DELETE FROM ", n.table, " WHERE ", n.expiration_column,
                      " <= ", NowSql(dialect), " - ", kPruneGraceSeconds);
}

std::string ListSql(TableDialect dialect, const TableStoreOptions& n,
                    const std::optional<std::string>& id) {
  std::string sql = absl::StrCat("SELECT ", n.id_column, ", ", n.expiration_column,
                                 " - ", NowSql(dialect), " FROM ", n.table, " WHERE ",
                                 n.expiration_column, " > ", NowSql(dialect));
  if (id) absl::StrAppend(&sql, " AND ", n.id_column, " = '", *id, "'");
  absl::StrAppend(&sql, " ORDER BY ", n.id_column);
  return sql;
}

}  // namespace ipclock
