// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "client_connect.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "core/dsn.h"

namespace ipclock_bench {

#if IPCLOCK_HAVE_REDIS
redisContext* ConnectRedis(const std::string& dsn, std::string* why) {
  absl::string_view rest = dsn;
  if (!absl::ConsumePrefix(&rest, "redis://")) {
    *why = "not a redis:// DSN";
    return nullptr;
  }
  rest = rest.substr(0, rest.find_first_of("/?"));
  if (size_t at = rest.rfind('@'); at != absl::string_view::npos) rest.remove_prefix(at + 1);
  std::string host(rest);
  int port = 6379;
  if (size_t colon = rest.rfind(':'); colon != absl::string_view::npos) {
    host = std::string(rest.substr(0, colon));
    if (!absl::SimpleAtoi(rest.substr(colon + 1), &port)) port = 6379;
  }
  if (host.empty()) host = "127.0.0.1";
  redisContext* c = redisConnect(host.c_str(), port);
  if (c == nullptr || c->err != 0) {
    return FailedConnect(c, redisFree, absl::StrCat("cannot connect to ", host, ":", port), why);
  }
  return c;
}
#endif

#if IPCLOCK_HAVE_POSTGRES
PGconn* ConnectPostgres(const std::string& dsn, std::string* why) {
  // libpq takes postgresql:// URIs; ipclock's scheme adds "+advisory".
  std::string uri = dsn;
  if (size_t plus = uri.find("+advisory://"); plus != std::string::npos) uri.erase(plus, 9);
  PGconn* conn = PQconnectdb(uri.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    return FailedConnect(conn, PQfinish, absl::StrCat("cannot connect: ", PQerrorMessage(conn)),
                         why);
  }
  return conn;
}
#endif

#if IPCLOCK_HAVE_MYSQL
MYSQL* ConnectMysql(const std::string& dsn, std::string* why) {
  absl::StatusOr<ipclock::Dsn> parsed = ipclock::Dsn::Parse(dsn);
  if (!parsed.ok()) {
    *why = std::string(parsed.status().message());
    return nullptr;
  }
  MYSQL* conn = mysql_init(nullptr);
  const std::string db = parsed->path().empty() ? "" : parsed->path().substr(1);
  if (mysql_real_connect(conn, parsed->host().c_str(), parsed->user().c_str(),
                         parsed->password().c_str(), db.c_str(),
                         static_cast<unsigned>(parsed->port()), nullptr, 0) == nullptr) {
    return FailedConnect(conn, mysql_close, absl::StrCat("cannot connect: ", mysql_error(conn)),
                         why);
  }
  return conn;
}
#endif

#if IPCLOCK_HAVE_SQLITE
sqlite3* OpenSqlite(const std::string& path, std::string* why) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    return FailedConnect(db, sqlite3_close_v2, absl::StrCat("cannot open ", path), why);
  }
  return db;
}
#endif

}  // namespace ipclock_bench
