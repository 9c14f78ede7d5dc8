// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Stores whose losses only a check finds (a table store's row deleted, a
// memcached key flushed) are checked at least every 100 ms, whatever the
// watch's check interval, at one statement a round for all the held locks
// of a store: counted here at the client library's query call over a
// second, with an interval of an hour (so that only the store's bound
// checks). Then `ipclock run` with --check-interval 3600: a row deleted
// (memcached flushed) under a holder ends its COMMAND within the round, and
// a second holder that gets the lock meanwhile overlaps the first's COMMAND
// for no longer than that. The figures are printed; the verdicts leave a
// loaded machine seconds of slack.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cli_util.h"
#include "core/dsn.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock_config.h"
#include "spawn_util.h"
#include "table_store_dbs.h"
#if IPCLOCK_HAVE_POSTGRES
#include "platform/libpq_calls.h"
#endif
#if IPCLOCK_HAVE_MYSQL
#include "platform/mariadb_calls.h"
#endif
#if IPCLOCK_HAVE_SQLITE
#include "platform/sqlite_calls.h"
#endif
#include "loss_log.h"  // last: it ends with test_util.h, which pulls in cmocka.h

namespace ipclock_test {
namespace {

// --- Statements counted at the client library ---------------------------------------

std::atomic<int> g_shared_checks{0};  // one SELECT for several rows
std::atomic<int> g_single_checks{0};  // one SELECT for one row

void Count(const char* sql) {
  if (!absl::StartsWith(sql, "SELECT")) return;
  (absl::StrContains(sql, " IN (") ? g_shared_checks : g_single_checks)++;
}

#if IPCLOCK_HAVE_POSTGRES
std::atomic<decltype(ipclock::LibpqCalls::PQsendQuery)::Function> g_real_pg{nullptr};
int CountingPgSend(PGconn* conn, const char* sql) {
  Count(sql);
  return g_real_pg.load()(conn, sql);
}
#endif
#if IPCLOCK_HAVE_MYSQL
std::atomic<decltype(ipclock::MariadbCalls::mysql_send_query)::Function> g_real_my{nullptr};
int CountingMySend(MYSQL* m, const char* sql, unsigned long length) {
  Count(std::string(sql, length).c_str());
  return g_real_my.load()(m, sql, length);
}
#endif
#if IPCLOCK_HAVE_SQLITE
std::atomic<decltype(ipclock::SqliteCalls::sqlite3_prepare_v2)::Function> g_real_lite{nullptr};
int CountingLitePrepare(sqlite3* db, const char* sql, int length, sqlite3_stmt** stmt,
                        const char** tail) {
  Count(length < 0 ? sql : std::string(sql, static_cast<size_t>(length)).c_str());
  return g_real_lite.load()(db, sql, length, stmt, tail);
}
#endif

// Counts the statements `db`'s store sends while it lives.
class StatementCount {
 public:
  explicit StatementCount(const Db& db) : name_(db.name) {
    g_shared_checks = 0;
    g_single_checks = 0;
#if IPCLOCK_HAVE_POSTGRES
    if (name_ == "postgresql") {
      g_real_pg = ipclock::Libpq().PQsendQuery.get();
      ipclock::Libpq().PQsendQuery.Replace(&CountingPgSend);
    }
#endif
#if IPCLOCK_HAVE_MYSQL
    if (name_ == "mysql") {
      g_real_my = ipclock::Mariadb().mysql_send_query.get();
      ipclock::Mariadb().mysql_send_query.Replace(&CountingMySend);
    }
#endif
#if IPCLOCK_HAVE_SQLITE
    if (name_ == "sqlite") {
      g_real_lite = ipclock::Sqlite().sqlite3_prepare_v2.get();
      ipclock::Sqlite().sqlite3_prepare_v2.Replace(&CountingLitePrepare);
    }
#endif
  }
  ~StatementCount() {
#if IPCLOCK_HAVE_POSTGRES
    if (name_ == "postgresql") ipclock::Libpq().PQsendQuery.Replace(g_real_pg.load());
#endif
#if IPCLOCK_HAVE_MYSQL
    if (name_ == "mysql") ipclock::Mariadb().mysql_send_query.Replace(g_real_my.load());
#endif
#if IPCLOCK_HAVE_SQLITE
    if (name_ == "sqlite") ipclock::Sqlite().sqlite3_prepare_v2.Replace(g_real_lite.load());
#endif
  }

 private:
  const std::string name_;
};

// Eight held locks of one table store, watched with an interval of an
// hour: the store's own bound checks them every 100 ms, one statement a
// round; a deleted row is found within the round, the others stay held.
void ChecksOfARoundAreOneStatement(void** state) {
  const Db& db = DbUnderTest(state);
  const std::string table = Table();
  auto store = NewStore(db, "db_table=" + table);
  constexpr int kLocks = 8;
  WatchedBatch batch(kLocks, store, "round", absl::Hours(1));
  absl::SleepFor(absl::Milliseconds(300));
  int shared = 0, single = 0;
  {
    StatementCount count(db);
    absl::SleepFor(absl::Seconds(1));
    shared = g_shared_checks.load();
    single = g_single_checks.load();
  }
  print_message("%s: over 1 s, %d locks watched with an interval of 1 h: %d checks of "
                "several rows, %d of one\n",
                db.name, kLocks, shared, single);
  // About 10 rounds of one statement; a statement a lock would be 80, and
  // the interval alone none.
  assert_int_equal(single, 0);
  assert_true(shared >= 3);
  assert_true(shared <= 20);
  for (int i = 0; i < kLocks; ++i) assert_int_equal(batch.lost_at[i].load(), 0);
  const std::string id = db.query(absl::StrCat("SELECT key_id FROM ", table, " LIMIT 1"));
  assert_false(id.empty());
  const int64_t deleted = absl::GetCurrentTimeNanos();
  db.query(absl::StrCat("DELETE FROM ", table, " WHERE key_id = '", id, "'"));
  int lost = -1;
  while (absl::GetCurrentTimeNanos() - deleted < 20 * int64_t{1000000000}) {
    for (int i = 0; i < kLocks; ++i) {
      if (batch.lost_at[i].load() != 0) lost = i;
    }
    if (lost >= 0) break;
    absl::SleepFor(absl::Milliseconds(2));
  }
  if (lost < 0) fail_msg("%s: the deleted row was not found in 20 s", db.name);
  print_message("%s: a deleted row reported %.1f ms after the DELETE returned\n", db.name,
                static_cast<double>(batch.lost_at[lost].load() - deleted) / 1e6);
  absl::SleepFor(absl::Milliseconds(300));
  for (int i = 0; i < kLocks; ++i) {
    if (i != lost && batch.lost_at[i].load() != 0) fail_msg("lock %d reported lost as well", i);
  }
  for (int i = 0; i < kLocks; ++i) {
    absl::Status released = batch.held[i].Release();
    if (i == lost) {
      ASSERT_CODE(released, absl::StatusCode::kAborted);
    } else {
      ASSERT_OK(released);
    }
  }
}

// --- ipclock run --------------------------------------------------------------------

double NowSeconds() { return static_cast<double>(absl::GetCurrentTimeNanos()) / 1e9; }

// A holder of `store` runs with --check-interval 3600; `lose` takes its
// lock away (deletes its row, flushes memcached). Its COMMAND is killed
// within the store's round, and a second run, started at once and waiting,
// gets the lock meanwhile: how long the two COMMANDs overlapped is printed,
// and must stay far below the hour the interval alone would take.
void LossEndsTheCommand(const std::string& store, const char* what,
                        const std::function<void()>& lose) {
  const std::string r = UniqueResource("round-cli");
  const pid_t first = StartCliHolder({"run", "--store", store, "--key", r, "--check-interval",
                                      "3600", "--kill-after", "0"});
  const std::string started = ScratchFile("second-started");
  const double lost_at = NowSeconds();
  lose();
  SpawnOptions quiet;
  const pid_t second =
      Spawn(WithCli({"run", "--store", store, "--key", r, "-w", "20", "--", "sh", "-c",
                     absl::StrCat("date +%s.%N > '", started, ".tmp' && mv '", started,
                                  ".tmp' '", started, "'")}),
            quiet);
  const int first_code = WaitChild(first, 20);
  const double first_ended = NowSeconds();
  assert_int_equal(WaitChild(second, 30), 0);
  double second_started = 0;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(ReadFileOrEmpty(started)),
                        &second_started)) {
    fail_msg("%s: the second run's COMMAND never wrote when it started", what);
  }
  print_message("%s: the first run ended %.1f ms after the loss (exit %d); the second's "
                "COMMAND started %.1f ms after it; overlap %.1f ms\n",
                what, (first_ended - lost_at) * 1e3, first_code,
                (second_started - lost_at) * 1e3,
                std::max(0.0, first_ended - second_started) * 1e3);
  assert_int_equal(first_code, 79);
  // The bound is 100 ms and a round trip; seconds leave room for a loaded
  // machine, and the hour of the interval none.
  if (first_ended - second_started > 5) {
    fail_msg("%s: the two COMMANDs overlapped for %.1f s", what, first_ended - second_started);
  }
}

void DeletedRowEndsTheCommand(void** state) {
  const Db& db = DbUnderTest(state);
  const std::string table = Table();
  LossEndsTheCommand(WithOptions(db.dsn, "db_table=" + table), db.name,
                     [&] { db.query(absl::StrCat("DELETE FROM ", table)); });
}

// "flush_all" to the memcached server of `dsn`.
void FlushMemcached(const std::string& dsn) {
  absl::StatusOr<ipclock::Dsn> parsed = ipclock::Dsn::Parse(dsn);
  ASSERT_OK(parsed);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true(fd >= 0);
  struct sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(parsed->port()));
  assert_int_equal(inet_pton(AF_INET, parsed->host().c_str(), &a.sin_addr), 1);
  assert_int_equal(connect(fd, reinterpret_cast<struct sockaddr*>(&a), sizeof a), 0);
  const char kFlush[] = "flush_all\r\n";
  assert_int_equal(write(fd, kFlush, strlen(kFlush)), static_cast<ssize_t>(strlen(kFlush)));
  char reply[16] = {};
  assert_true(read(fd, reply, sizeof reply - 1) > 0);
  close(fd);
  if (!absl::StartsWith(reply, "OK")) fail_msg("flush_all: %s", reply);
}

void FlushedMemcachedEndsTheCommand(void**) {
  if (!IPCLOCK_HAVE_MEMCACHED) {
    print_message("skipped: memcached is not in this build\n");
    skip();
  }
  const std::string dsn = RequireEnv("IPCLOCK_TEST_MEMCACHED");
  const std::string store =
      absl::StrCat(dsn, dsn.find('?') == std::string::npos ? "?" : "&", "secret=none");
  LossEndsTheCommand(store, "memcached", [&] { FlushMemcached(dsn); });
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  return RunPerDbGroup("check_round_test",
                       {
                           {"ChecksOfARoundAreOneStatement", ChecksOfARoundAreOneStatement},
                           {"DeletedRowEndsTheCommand", DeletedRowEndsTheCommand},
                       },
                       {
                           cmocka_unit_test(FlushedMemcachedEndsTheCommand),
                       });
}
