// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "mysql_fixture.h"

#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

MysqlConn MysqlConnect(const ipclock::Dsn& dsn) {
  MysqlConn conn(mysql_init(nullptr));
  mysql_optionsv(conn.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  const std::string db = dsn.path().substr(1);
  mysql_real_connect(conn.get(), dsn.host().c_str(), dsn.user().c_str(), dsn.password().c_str(),
                     db.c_str(), static_cast<unsigned>(dsn.port()), nullptr, 0);
  return conn;
}

std::string MysqlQuery(MYSQL* conn, const std::string& sql) {
  if (mysql_real_query(conn, sql.data(), sql.size()) != 0) {
    fail_msg("%s: %s", sql.c_str(), mysql_error(conn));
  }
  MYSQL_RES* res = mysql_store_result(conn);
  if (res == nullptr) return "";
  std::string value;
  if (MYSQL_ROW row = mysql_fetch_row(res)) {
    value = row[0] == nullptr ? "NULL" : std::string(row[0], mysql_fetch_lengths(res)[0]);
  }
  mysql_free_result(res);
  return value;
}

}  // namespace ipclock_test
