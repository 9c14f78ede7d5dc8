// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "sql_peers.h"

#include "absl/strings/str_cat.h"
#include "core/dsn.h"
#include "ipclock_config.h"

#if IPCLOCK_HAVE_MYSQL
#include <mysql.h>
#endif
#if IPCLOCK_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace ipclock_bench {

double MysqlSelect1(const RunShape& shape, const std::string& dsn, std::string* why) {
#if IPCLOCK_HAVE_MYSQL
  absl::StatusOr<ipclock::Dsn> parsed = ipclock::Dsn::Parse(dsn);
  if (!parsed.ok()) {
    *why = std::string(parsed.status().message());
    return -1;
  }
  MYSQL* conn = mysql_init(nullptr);
  const std::string db = parsed->path().empty() ? "" : parsed->path().substr(1);
  if (mysql_real_connect(conn, parsed->host().c_str(), parsed->user().c_str(),
                         parsed->password().c_str(), db.c_str(),
                         static_cast<unsigned>(parsed->port()), nullptr, 0) == nullptr) {
    *why = absl::StrCat("cannot connect: ", mysql_error(conn));
    mysql_close(conn);
    return -1;
  }
  double ns = MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (mysql_query(conn, "SELECT 1") != 0) return false;
      MYSQL_RES* res = mysql_store_result(conn);
      if (res == nullptr) return false;
      mysql_free_result(res);
    }
    return true;
  });
  mysql_close(conn);
  return ns;
#else
  (void)shape;
  (void)dsn;
  *why = "MariaDB Connector/C not built in";
  return -1;
#endif
}

double SqliteSelect1(const RunShape& shape, const std::string& path, std::string* why) {
#if IPCLOCK_HAVE_SQLITE
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    *why = absl::StrCat("cannot open ", path);
    sqlite3_close_v2(db);
    return -1;
  }
  double ns = MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, "SELECT 1", -1, &stmt, nullptr) != SQLITE_OK) return false;
      const bool ok = sqlite3_step(stmt) == SQLITE_ROW;
      sqlite3_finalize(stmt);
      if (!ok) return false;
    }
    return true;
  });
  sqlite3_close_v2(db);
  return ns;
#else
  (void)shape;
  (void)path;
  *why = "libsqlite3 not built in";
  return -1;
#endif
}

}  // namespace ipclock_bench
