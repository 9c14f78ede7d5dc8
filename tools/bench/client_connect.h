// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The bench's own connections to the servers the peers' rows measure (a
// round trip, raw statements, a lock taken away), made with the client
// library the store uses. Each returns nullptr, with `*why` set, when it
// cannot connect. Only the libraries this build has are declared.

#ifndef IPCLOCK_TOOLS_BENCH_CLIENT_CONNECT_H_
#define IPCLOCK_TOOLS_BENCH_CLIENT_CONNECT_H_

#include <string>
#include <utility>

#include "ipclock_config.h"

#if IPCLOCK_HAVE_REDIS
#include <hiredis/hiredis.h>
#endif
#if IPCLOCK_HAVE_POSTGRES
#include <libpq-fe.h>
#endif
#if IPCLOCK_HAVE_MYSQL
#include <mysql.h>
#endif
#if IPCLOCK_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace ipclock_bench {

// Ends a connection attempt that failed: closes `conn` with `close` if the
// client library made one, sets `*why` to `message` (which may quote the
// library's error on `conn`) and returns nullptr.
template <typename Conn, typename Close>
Conn* FailedConnect(Conn* conn, Close close, std::string message, std::string* why) {
  if (conn != nullptr) close(conn);
  *why = std::move(message);
  return nullptr;
}

#if IPCLOCK_HAVE_REDIS
// redis://[user:password@]host[:port][/db][?options]: only host and port
// matter to the bench's own commands.
redisContext* ConnectRedis(const std::string& dsn, std::string* why);
#endif
#if IPCLOCK_HAVE_POSTGRES
// A postgresql[+advisory]:// DSN, or anything libpq's PQconnectdb takes.
PGconn* ConnectPostgres(const std::string& dsn, std::string* why);
#endif
#if IPCLOCK_HAVE_MYSQL
// The server of a mysql[+advisory]:// DSN.
MYSQL* ConnectMysql(const std::string& dsn, std::string* why);
#endif
#if IPCLOCK_HAVE_SQLITE
// The database file `path`, created if missing.
sqlite3* OpenSqlite(const std::string& path, std::string* why);
#endif

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_CLIENT_CONNECT_H_
