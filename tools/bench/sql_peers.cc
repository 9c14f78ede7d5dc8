// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "sql_peers.h"

#include "absl/strings/str_cat.h"
#include "client_connect.h"

namespace ipclock_bench {

double MysqlSelect1([[maybe_unused]] const RunShape& shape, [[maybe_unused]] const std::string& dsn,
                    std::string* why) {
#if IPCLOCK_HAVE_MYSQL
  return MedianNsPerCall(shape, ConnectMysql(dsn, why), mysql_close, [](MYSQL* conn) {
    if (mysql_query(conn, "SELECT 1") != 0) return false;
    MYSQL_RES* res = mysql_store_result(conn);
    if (res == nullptr) return false;
    mysql_free_result(res);
    return true;
  });
#else
  return Unavailable(why, "MariaDB Connector/C not built in");
#endif
}

double SqliteSelect1([[maybe_unused]] const RunShape& shape,
                     [[maybe_unused]] const std::string& path, std::string* why) {
#if IPCLOCK_HAVE_SQLITE
  return MedianNsPerCall(shape, OpenSqlite(path, why), sqlite3_close_v2, [](sqlite3* db) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT 1", -1, &stmt, nullptr) != SQLITE_OK) return false;
    const bool ok = sqlite3_step(stmt) == SQLITE_ROW;
    sqlite3_finalize(stmt);
    return ok;
  });
#else
  return Unavailable(why, "libsqlite3 not built in");
#endif
}

namespace {

// Symfony's statements on the table bench_raw, for `now` (the database's
// "now" expression).
std::string Insert(const char* now) {
  return absl::StrCat(
      "INSERT INTO bench_raw (key_id, key_token, key_expiration) VALUES ('",
      std::string(64, 'a'), "', '", std::string(44, 't'), "', ", now, " + 301)");
}
std::string Delete() {
  return absl::StrCat("DELETE FROM bench_raw WHERE key_id = '", std::string(64, 'a'),
                      "' AND key_token = '", std::string(44, 't'), "'");
}

}  // namespace

double RawInsertDelete(const RunShape& shape, const std::string& kind, const std::string& dsn,
                       std::string* why) {
  const std::string create =
      "CREATE TABLE IF NOT EXISTS bench_raw (key_id VARCHAR(64) NOT NULL PRIMARY KEY, "
      "key_token VARCHAR(64) NOT NULL, key_expiration INTEGER)";
#if IPCLOCK_HAVE_POSTGRES
  if (kind == "pgsql") {
    PGconn* conn = ConnectPostgres(dsn, why);
    if (conn == nullptr) return -1;
    auto exec = [&](const std::string& sql) {
      PGresult* r = PQexec(conn, sql.c_str());
      const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
      PQclear(r);
      return ok;
    };
    exec(create);
    const std::string insert = Insert("CAST(EXTRACT(epoch FROM NOW()) AS INT)");
    return MedianNsPerCall(shape, conn, PQfinish,
                           [&](PGconn*) { return exec(insert) && exec(Delete()); });
  }
#endif
#if IPCLOCK_HAVE_MYSQL
  if (kind == "mysql") {
    MYSQL* conn = ConnectMysql(dsn, why);
    if (conn == nullptr) return -1;
    mysql_query(conn, create.c_str());
    const std::string insert = Insert("UNIX_TIMESTAMP()");
    const std::string del = Delete();
    return MedianNsPerCall(shape, conn, mysql_close, [&](MYSQL* c) {
      return mysql_query(c, insert.c_str()) == 0 && mysql_query(c, del.c_str()) == 0;
    });
  }
#endif
#if IPCLOCK_HAVE_SQLITE
  if (kind == "sqlite") {
    sqlite3* conn = OpenSqlite(dsn, why);
    if (conn == nullptr) return -1;
    // As the store sets it up.
    sqlite3_exec(conn, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    sqlite3_exec(conn, "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr);
    sqlite3_exec(conn, create.c_str(), nullptr, nullptr, nullptr);
    const std::string insert = Insert("strftime('%s','now')");
    const std::string del = Delete();
    return MedianNsPerCall(shape, conn, sqlite3_close_v2, [&](sqlite3* c) {
      return sqlite3_exec(c, insert.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK &&
             sqlite3_exec(c, del.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
    });
  }
#endif
  (void)shape;
  (void)dsn;
  (void)create;
  *why = absl::StrCat("no ", kind, " client built in");
  return -1;
}

}  // namespace ipclock_bench
