// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The databases of table_store_test and the test's raw connections to them
// (table_store_dbs.h).

#include "table_store_dbs.h"

#include <stdlib.h>
#include <string.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/dsn.h"
#include "ipclock/store_factory.h"
#include "ipclock_config.h"
#include "test_util.h"  // pulls in cmocka.h

#include "mysql_fixture.h"
#include "postgres_fixture.h"
#if IPCLOCK_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace ipclock_test {

using ipclock::Lock;
using ipclock::LockOptions;
using ipclock::Store;

Db g_dbs[3];

std::string Table() {
  std::string r = UniqueResource("t");
  std::string out = "t_";
  for (char c : r) out += absl::ascii_isalnum(c) ? c : '_';
  return out.substr(0, 60);
}

std::string WithOptions(const std::string& dsn, const std::string& options) {
  if (options.empty()) return dsn;
  return absl::StrCat(dsn, dsn.find('?') == std::string::npos ? "?" : "&", options);
}

std::shared_ptr<Store> NewStore(const Db& db, const std::string& options) {
  absl::StatusOr<std::shared_ptr<Store>> store =
      ipclock::StoreFromDsn(WithOptions(db.dsn, options));
  ASSERT_OK(store);
  return *store;
}

Lock MakeLock(const std::shared_ptr<Store>& store, const std::string& resource,
              absl::Duration ttl) {
  LockOptions options;
  options.ttl = ttl;
  absl::StatusOr<Lock> lock = Lock::Create(store, resource, options);
  ASSERT_OK(lock);
  return *std::move(lock);
}

bool Try(Lock& lock) {
  absl::StatusOr<bool> got = lock.TryAcquire();
  ASSERT_OK(got);
  return *got;
}

int64_t Number(const std::string& text) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(text, &n)) fail_msg("not a number: '%s'", text.c_str());
  return n;
}

const Db& DbUnderTest(void** state) {
  const Db& db = *static_cast<Db*>(*state);
  if (!db.built) {
    print_message("skipped: %s is not in this build\n", db.name);
    skip();
  }
  if (db.dsn.empty()) {
    const char* ci = getenv("CI");
    if (ci != nullptr && strcmp(ci, "true") == 0) fail_msg("%s is not set (CI=true)", db.env);
    print_message("skipped: %s is not set (tools/dev test starts the server)\n", db.env);
    skip();
  }
  return db;
}

// --- Raw connections -----------------------------------------------------------

// On the PostgreSQL server at `pg_uri` or, `is_pg` false, the MariaDB
// server of `my_dsn`; nullptr without that client library in this build.
// Connected here, outside any test: a failure shows at the first query.
RawQuery ServerQuery(bool is_pg, [[maybe_unused]] const std::string& pg_uri,
                     [[maybe_unused]] const ipclock::Dsn& my_dsn) {
#if IPCLOCK_HAVE_POSTGRES
  if (is_pg) {
    std::shared_ptr<PGconn> conn(PQconnectdb(pg_uri.c_str()), PQfinish);
    return [conn](const std::string& sql) { return Query(conn.get(), sql); };
  }
#endif
#if IPCLOCK_HAVE_MYSQL
  if (!is_pg) {
    std::shared_ptr<MYSQL> conn(MysqlConnect(my_dsn).release(), mysql_close);
    return [conn](const std::string& sql) { return MysqlQuery(conn.get(), sql); };
  }
#endif
  return nullptr;
}

#if IPCLOCK_HAVE_SQLITE
RawQuery LiteQuery(const std::string& path) {
  sqlite3* raw = nullptr;
  sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::shared_ptr<sqlite3> conn(raw, sqlite3_close_v2);
  sqlite3_busy_timeout(raw, 5000);
  return [conn](const std::string& sql) {
    std::string value;
    bool first = true;
    char* err = nullptr;
    auto cb = [](void* out, int, char** values, char**) {
      auto* v = static_cast<std::pair<std::string*, bool*>*>(out);
      if (*v->second) *v->first = values[0] != nullptr ? values[0] : "NULL";
      *v->second = false;
      return 0;
    };
    std::pair<std::string*, bool*> out(&value, &first);
    if (sqlite3_exec(conn.get(), sql.c_str(), cb, &out, &err) != SQLITE_OK) {
      std::string msg = err != nullptr ? err : "?";
      sqlite3_free(err);
      fail_msg("%s: %s", sql.c_str(), msg.c_str());
    }
    return value;
  };
}

#else
RawQuery LiteQuery(const std::string&) { return nullptr; }
#endif

// What `db` is, whatever the build and the environment.
void Describe(Db* db, bool built, const char* name, const char* env, const char* pdo_ext,
              const char* now_sql) {
  db->built = built;
  db->name = name;
  db->env = env;
  db->pdo_ext = pdo_ext;
  db->now_sql = now_sql;
}

void SetUpDatabases() {
  Db& pg = g_dbs[0];
  Describe(&pg, IPCLOCK_HAVE_POSTGRES, "postgresql", "IPCLOCK_TEST_POSTGRES_TABLE", "pdo_pgsql",
           "CAST(EXTRACT(epoch FROM NOW()) AS INT)");
  Db& my = g_dbs[1];
  Describe(&my, IPCLOCK_HAVE_MYSQL, "mysql", "IPCLOCK_TEST_MYSQL_TABLE", "pdo_mysql",
           "UNIX_TIMESTAMP()");
  for (Db* db : {&pg, &my}) {
    const char* dsn = getenv(db->env);
    if (!db->built) continue;
    if (dsn == nullptr || dsn[0] == '\0') continue;
    absl::StatusOr<ipclock::Dsn> parsed = ipclock::Dsn::Parse(dsn);
    if (!parsed.ok()) continue;
    db->dsn = dsn;
    db->user = parsed->user();
    db->password = parsed->password();
    const std::string where = absl::StrCat("host=", parsed->host(), ";port=", parsed->port(),
                                           ";dbname=", parsed->path().substr(1));
    const bool is_pg = db == &pg;
    db->pdo_dsn = absl::StrCat(is_pg ? "pgsql:" : "mysql:", where);
    db->pdo_form = absl::StrCat(db->pdo_dsn, "?user=", db->user, "&password=", db->password);
    db->query = ServerQuery(
        is_pg, absl::StrCat("postgresql://", std::string(dsn).substr(strlen("postgresql://"))),
        *parsed);
  }
  Db& lite = g_dbs[2];
  Describe(&lite, IPCLOCK_HAVE_SQLITE, "sqlite", /*env=*/nullptr, "pdo_sqlite",
           "strftime('%s','now')");
  const std::string path = MakeTempDir() + "/locks.db";
  lite.dsn = absl::StrCat("sqlite://", path);
  lite.pdo_form = absl::StrCat("sqlite:", path);
  lite.pdo_dsn = absl::StrCat("sqlite:", path);
  lite.query = LiteQuery(path);
}

int RunPerDbGroup(const char* group, const std::vector<PerDbTest>& per_db,
                  std::vector<CMUnitTest> others) {
  SetUpDatabases();
  // cmocka keeps the names' pointers: a deque never moves what it holds.
  std::deque<std::string> names;
  std::vector<CMUnitTest> tests;
  for (Db& db : g_dbs) {
    for (const PerDbTest& test : per_db) {
      names.push_back(absl::StrCat(test.name, " ", db.name));
      tests.push_back(CMUnitTest{names.back().c_str(), test.run, nullptr, nullptr, &db});
    }
  }
  tests.insert(tests.end(), others.begin(), others.end());
  return _cmocka_run_group_tests(group, tests.data(), tests.size(), nullptr, nullptr);
}

}  // namespace ipclock_test
