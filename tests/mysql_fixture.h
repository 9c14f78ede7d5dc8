// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The test's own connection to a MariaDB server (as an administrator
// would have one), for the suites that check what the stores leave there:
// mysql_store_test and table_store_test.

#ifndef IPCLOCK_TESTS_MYSQL_FIXTURE_H_
#define IPCLOCK_TESTS_MYSQL_FIXTURE_H_

// Empty in a build without the store, so that a suite of several stores
// can include each fixture without an #if.
#include "ipclock_config.h"
#if IPCLOCK_HAVE_MYSQL

#include <mysql.h>

#include <memory>
#include <string>

#include "core/dsn.h"

namespace ipclock_test {

struct MysqlCloser {
  void operator()(MYSQL* m) const { mysql_close(m); }
};
using MysqlConn = std::unique_ptr<MYSQL, MysqlCloser>;

// A connection to `dsn`'s server and database, in utf8mb4. When it cannot
// connect, the handle is left unconnected with mysql_error() saying why
// (and a query on it fails the test).
MysqlConn MysqlConnect(const ipclock::Dsn& dsn);

// Runs one statement; its first value, "NULL" for NULL, "" for no row.
// Fails the test on an error.
std::string MysqlQuery(MYSQL* conn, const std::string& sql);

}  // namespace ipclock_test

#endif  // IPCLOCK_HAVE_MYSQL

#endif  // IPCLOCK_TESTS_MYSQL_FIXTURE_H_
