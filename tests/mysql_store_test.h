// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the source files of the mysql+advisory suite share: the server, the
// test's own connection to it; and the tests that live in
// mysql_store_test_sessions.cc, for mysql_store_test.cc's table.

#ifndef IPCLOCK_TESTS_MYSQL_STORE_TEST_H_
#define IPCLOCK_TESTS_MYSQL_STORE_TEST_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/dsn.h"
#include "ipclock/store.h"
#include "mysql_fixture.h"
#include "session_store_cases.h"

// Skips the test without $IPCLOCK_TEST_MYSQL (fails it under CI=true).
#define REQUIRE_SERVER() RequireEnv("IPCLOCK_TEST_MYSQL")

namespace ipclock_test {

// $IPCLOCK_TEST_MYSQL, the server's DSN.
const char* ServerDsn();
// That DSN with query `options` appended.
std::string Dsn(absl::string_view options = "");
ipclock::Dsn Parsed();
std::string Password();
// A store on Dsn(options).
std::shared_ptr<ipclock::Store> NewStore(absl::string_view options = "");

// The test's own connection, as an administrator would have one.
using Conn = MysqlConn;
Conn Connect();
std::string Query(MYSQL* conn, const std::string& sql);
// An SQL expression for the utf8mb4 string of `bytes`.
std::string Utf8(absl::string_view bytes);
// Ends the session that holds `resource`'s named lock; its id.
std::string KillHolder(MYSQL* admin, const std::string& resource);
// Whether a fresh store in a forked child gets `resource` at once (or
// within `wait`: a killed session's locks go a moment after its socket).
bool OtherProcessGets(const std::string& resource, absl::Duration wait = absl::ZeroDuration());

// The shared session cases (session_store_cases.h) on MariaDB.
extern SessionSuite kSessionSuite;

// The tests of mysql_store_test_sessions.cc, in one declaration, for the suite's table.
void WatchHearsTheKillAtOnce(void**), ServerRestartLosesTheLock(void**),
    IdleSessionEndedByTheServer(void**), ListShowsTheHolders(void**),
    BadDsnsAreRefusedWithoutThePassword(void**), ConnectionFailures(void**), TlsConnections(void**),
    SigpipeIsKeptFromTheProgram(void**), CliRunEndToEnd(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_MYSQL_STORE_TEST_H_
