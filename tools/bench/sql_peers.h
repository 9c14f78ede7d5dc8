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

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_SQL_PEERS_H_
