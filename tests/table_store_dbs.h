// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The databases table_store_test runs each test on (PostgreSQL and MariaDB
// from tools/test-servers, SQLite in a temp file), with a raw connection of
// the test's own to each, and the helpers its tests share.

#ifndef IPCLOCK_TESTS_TABLE_STORE_DBS_H_
#define IPCLOCK_TESTS_TABLE_STORE_DBS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"

struct CMUnitTest;  // cmocka.h's

namespace ipclock_test {

// One database under test, with a raw connection of the test's own.
struct Db {
  bool built = false;    // this build has the database's library
  const char* name;      // the store's name: "postgresql", "mysql", "sqlite"
  const char* env;       // the server's variable; nullptr for SQLite
  const char* pdo_ext;   // the PHP extension of its PDO driver
  std::string dsn;       // ipclock's URL form, without options
  std::string pdo_form;  // ipclock's PDO form, with ?user=&password=
  std::string pdo_dsn;   // PHP's PDO DSN
  std::string user, password;
  std::string now_sql;   // Symfony's "now" on this database
  std::function<std::string(const std::string&)> query;  // first value or ""
};

// PostgreSQL, MariaDB and SQLite, in that order: SetUpDatabases() fills
// them in.
extern Db g_dbs[3];
void SetUpDatabases();

// A test that runs once on each database, given its Db as the state.
struct PerDbTest {
  const char* name;
  void (*run)(void** state);
};
// Sets the databases up, then runs the cmocka group `group`: each of
// `per_db` once per database, in g_dbs' order, named "<name> <database>";
// then `others`.
int RunPerDbGroup(const char* group, const std::vector<PerDbTest>& per_db,
                  std::vector<CMUnitTest> others);

// The Db a test of RunPerDbGroup's runs on (its state). Skips the test
// when the database is not in this build, or its server's variable is unset
// (fails it under CI=true).
const Db& DbUnderTest(void** state);

// A table name of the test's own (t_<random>).
std::string Table();
// `dsn` with query `options` added.
std::string WithOptions(const std::string& dsn, const std::string& options);
// A store on `db`'s DSN with `options`.
std::shared_ptr<ipclock::Store> NewStore(const Db& db, const std::string& options);
// A Lock with a lease of `ttl`.
ipclock::Lock MakeLock(const std::shared_ptr<ipclock::Store>& store, const std::string& resource,
                       absl::Duration ttl = absl::Seconds(300));
// TryAcquire, failing the test on an error.
bool Try(ipclock::Lock& lock);
// `text` as a number, failing the test if it is not one.
int64_t Number(const std::string& text);

// A raw query on a connection of the test's own: the first value or "".
using RawQuery = std::function<std::string(const std::string&)>;
// On the SQLite file at `path` (nullptr without SQLite in this build).
RawQuery LiteQuery(const std::string& path);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_TABLE_STORE_DBS_H_
