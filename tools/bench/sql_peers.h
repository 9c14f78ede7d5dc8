// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The floors of the SQL stores: one `SELECT 1` on one connection, made with
// the client library the store uses. Each returns the median ns per
// statement, or < 0 (with `*why` set) when the library is not built in or
// the database cannot be reached.

#ifndef IPCLOCK_TOOLS_BENCH_SQL_PEERS_H_
#define IPCLOCK_TOOLS_BENCH_SQL_PEERS_H_

#include <string>

#include "measure.h"

namespace ipclock_bench {

// Through MariaDB Connector/C to the server of a mysql[+advisory]:// DSN.
double MysqlSelect1(const RunShape& shape, const std::string& dsn, std::string* why);
// Through libsqlite3 on the database file `path` (in-process: no round trip,
// the cost of the library's statement machinery).
double SqliteSelect1(const RunShape& shape, const std::string& path, std::string* why);

// The statements of one uncontended table lock, without ipclock: an INSERT
// of a row and its DELETE, in Symfony's SQL, on a table of their own
// (created if missing). `kind` is "pgsql", "mysql" or "sqlite"; `dsn` is
// the table store's DSN (for SQLite, the file's path).
double RawInsertDelete(const RunShape& shape, const std::string& kind, const std::string& dsn,
                       std::string* why);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_SQL_PEERS_H_
