// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the PostgreSQL suites need: the server of tools/test-servers/
// postgres.sh ($IPCLOCK_TEST_POSTGRES, or a skip), a server of the test's
// own to restart and to count transactions on, and plain libpq
// connections to look at and act on sessions.
//
// Tests call RequirePostgres() / OwnPostgres() before they make any object:
// a skip longjmps past destructors. Without a server they skip, saying why,
// unless CI=true: then they fail.
//
// Include this header last: it pulls in cmocka.h (through test_util.h).

#ifndef IPCLOCK_TESTS_POSTGRES_FIXTURE_H_
#define IPCLOCK_TESTS_POSTGRES_FIXTURE_H_

// Empty in a build without the store, so that a suite of several stores
// can include each fixture without an #if.
#include "ipclock_config.h"
#if IPCLOCK_HAVE_POSTGRES

#include <libpq-fe.h>

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "test_util.h"

namespace ipclock_test {

// $IPCLOCK_TEST_POSTGRES, or a skip (a failure under CI=true).
const char* RequirePostgres();

// An ipclock DSN (postgresql+advisory://...) as a libpq URI.
std::string LibpqUri(absl::string_view dsn);
// `dsn` with query `options` appended.
std::string WithQuery(absl::string_view dsn, absl::string_view options);

struct PgConnCloser {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using PgConn = std::unique_ptr<PGconn, PgConnCloser>;

// A libpq connection to the server of an ipclock DSN; fails the test if it
// cannot connect.
PgConn ConnectTo(absl::string_view dsn);
// Runs one statement; its first value ("" for none). Fails the test on error.
std::string Query(PGconn* conn, const std::string& sql);

// Ends (pg_terminate_backend) every session holding the advisory lock of
// `resource` under the native scheme, waiting until each is gone; returns
// how many.
int TerminateHolder(PGconn* admin, const std::string& resource);

// A PostgreSQL cluster of the test's own: initdb into a temp dir (as the
// `postgres` user when run as root), on loopback at the first free port of
// $IPCLOCK_TEST_PORT_BASE+90..98, trust authentication for the superuser
// `ipclock`, no fsync, and no autovacuum (so that nothing but the test runs
// transactions in its databases).
class PostgresServer {
 public:
  ~PostgresServer() { Stop(); }
  // Why it cannot run (nullptr once it runs). Starts it on first use.
  const char* Start();
  // pg_ctl stop; `mode` is smart, fast or immediate.
  void Stop(const char* mode = "immediate");
  // pg_ctl restart -m `mode`: the server ends every session.
  void Restart(const char* mode = "fast");
  // postgresql+advisory://ipclock@127.0.0.1:PORT/DB
  std::string dsn(absl::string_view db = "postgres") const;

 private:
  bool PgCtl(const std::vector<std::string>& args);

  std::string bindir_;
  std::string dir_;
  int port_ = 0;
  bool running_ = false;
};

// The suite's own server, started; a skip (a failure under CI=true) without
// the PostgreSQL server binaries.
PostgresServer& OwnPostgres();

}  // namespace ipclock_test

#endif  // IPCLOCK_HAVE_POSTGRES

#endif  // IPCLOCK_TESTS_POSTGRES_FIXTURE_H_
