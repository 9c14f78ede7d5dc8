// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A held PostgreSQL advisory lock lost with its session: an administrator's
// pg_terminate_backend (on the server of tools/test-servers/postgres.sh),
// and a restart of the suite's own server, in fast and in immediate mode.
// Each loss is seen the three ways a holder can see it: Lock::
// CheckAcquired(), Release(), and a LockWatch, which must report it at once
// from the session's socket: its check interval is a minute, so only the
// socket can explain a report within seconds. Detection latencies are
// printed.

#include <stdlib.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "postgres_fixture.h"
#include "loss_log.h"  // last: they pull in cmocka.h

namespace ipclock_test {
namespace {

using ipclock::Lock;
using ipclock::Diagnostic;
using ipclock::LockWatch;
using ipclock::Store;
using ipclock::WatchedLock;
using ipclock::WatchOptions;

constexpr absl::Duration kInterval = absl::Seconds(60);

std::shared_ptr<Store> NewStore(const std::string& dsn) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  ASSERT_OK(store);
  return *store;
}

Lock Locked(const std::shared_ptr<Store>& store, const std::string& resource) {
  absl::StatusOr<Lock> lock = Lock::Create(store, resource);
  ASSERT_OK(lock);
  absl::StatusOr<bool> got = lock->TryAcquire();
  ASSERT_OK(got);
  assert_true(*got);
  return *std::move(lock);
}

bool FreeFor(const std::shared_ptr<Store>& other, const std::string& resource) {
  absl::StatusOr<Lock> lock = Lock::Create(other, resource);
  ASSERT_OK(lock);
  absl::StatusOr<bool> got = lock->TryAcquire();
  ASSERT_OK(got);
  return *got;
}

struct Loss {
  const char* name;
  // Ends the session that holds `resource` on the server of `dsn`.
  void (*cause)(const std::string& dsn, const std::string& resource);
  // What every report must say beside "the session ended".
  const char* says;
};

void Terminate(const std::string& dsn, const std::string& resource) {
  PgConn admin = ConnectTo(dsn);
  assert_int_equal(TerminateHolder(admin.get(), resource), 1);
}
void RestartFast(const std::string&, const std::string&) { OwnPostgres().Restart("fast"); }
void RestartImmediate(const std::string&, const std::string&) {
  OwnPostgres().Restart("immediate");
}

const Loss kTerminate = {"pg_terminate_backend", &Terminate,
                         "terminating connection due to administrator command"};
const Loss kRestartFast = {"a fast restart", &RestartFast,
                           "terminating connection due to administrator command"};
// An immediate shutdown ends backends with SIGQUIT: some say why first,
// some only close.
const Loss kRestartImmediate = {"an immediate restart", &RestartImmediate, ""};

void ExpectReport(const absl::Status& s, const Loss& loss, absl::string_view also) {
  print_message("%s: %s\n", loss.name, s.ToString().c_str());
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  assert_true(absl::StrContains(s.message(), "the session ended"));
  assert_true(absl::StrContains(s.message(), loss.says));
  assert_true(absl::StrContains(s.message(), also));
}

void LoseThreeWays(const Loss& loss, const std::string& dsn) {
  auto store = NewStore(dsn);
  auto other = NewStore(dsn);
  std::vector<std::string> latencies;
  {
    const std::string r = UniqueResource("pg-lost-check");
    Lock lock = Locked(store, r);
    loss.cause(dsn, r);
    ExpectReport(lock.CheckAcquired(), loss, "");
    assert_false(lock.is_acquired());
    assert_true(FreeFor(other, r));
  }
  {
    const std::string r = UniqueResource("pg-lost-release");
    Lock lock = Locked(store, r);
    loss.cause(dsn, r);
    ExpectReport(lock.Release(), loss, "");
  }
  {
    const std::string r = UniqueResource("pg-lost-watch");
    Lock lock = Locked(store, r);
    LossLog first;
    LockWatch watch;
    WatchedLock watched = first.Watch(watch, std::move(lock), kInterval);
    absl::SleepFor(absl::Milliseconds(200));
    assert_int_equal(first.size(), 0);
    const double before = NowSeconds();
    loss.cause(dsn, r);
    const double after = NowSeconds();
    if (!first.WaitUntil(after + 20)) fail_msg("%s: not reported within 20 s", loss.name);
    // The cause returns once the session is gone (a restart: once the
    // server is back), so the report may come before it returns.
    latencies.push_back(absl::StrFormat(
        "%s: reported %.1f ms after the cause began (it took %.1f ms)", loss.name,
        (first.first_at() - before) * 1e3, (after - before) * 1e3));
    ExpectReport(first.first().status, loss, "");
    ExpectReport(watched.Release(), loss, "");
    assert_int_equal(first.size(), 1);
  }
  // The same store takes locks again on fresh sessions: none of the dead
  // pooled ones is handed out.
  Lock again = Locked(store, UniqueResource("pg-again"));
  assert_true(IsStillHeld(again));
  for (const std::string& l : latencies) print_message("latency: %s\n", l.c_str());
}

void SessionTerminated(void**) { LoseThreeWays(kTerminate, RequirePostgres()); }
void ServerRestartedFast(void**) { LoseThreeWays(kRestartFast, OwnPostgres().dsn()); }
void ServerRestartedImmediate(void**) {
  LoseThreeWays(kRestartImmediate, OwnPostgres().dsn());
}

// Nothing lost, nothing reported: a watched lock whose socket sees the
// server's other traffic (a parameter change, a notice to all sessions)
// stays held.
void HealthySessionIsNotReported(void**) {
  const std::string dsn = RequirePostgres();
  auto store = NewStore(dsn);
  Lock lock = Locked(store, UniqueResource("pg-healthy"));
  LossLog first;
  LockWatch watch;
  WatchOptions options = first.Options(kInterval);
  options.check_interval = absl::Milliseconds(50);
  absl::StatusOr<WatchedLock> watched = watch.Watch(std::move(lock), options);
  ASSERT_OK(watched);
  PgConn admin = ConnectTo(dsn);
  Query(admin.get(), "SELECT pg_reload_conf()");
  absl::SleepFor(absl::Seconds(1));
  assert_int_equal(first.size(), 0);
  ASSERT_OK(watched->CheckNow());
  ASSERT_OK(watched->Release());
}


// The watch checks the locks of a store together, and the store answers
// them with one query a round on one of their sessions: the other sessions
// stay silent. A session ended meanwhile is still told at once, and the
// rest stay held.
void LocksOfAStoreAreCheckedByOneQuery(void**) {
  const std::string dsn = RequirePostgres();
  // The store's sessions are told apart from every other by their name.
  const std::string app = UniqueResource("pg-shared-check");
  setenv("PGAPPNAME", app.c_str(), 1);
  auto store = NewStore(dsn);
  constexpr int kLocks = 6;
  std::vector<std::string> names;
  std::vector<LossLog> losses(kLocks);
  std::vector<WatchedLock> held;
  LockWatch watch;
  for (int i = 0; i < kLocks; ++i) {
    names.push_back(UniqueResource("pg-shared"));
    WatchOptions options = losses[i].Options(kInterval);
    options.check_interval = absl::Milliseconds(200);
    absl::StatusOr<WatchedLock> w = watch.Watch(Locked(store, names.back()), options);
    ASSERT_OK(w);
    held.push_back(*std::move(w));
  }
  unsetenv("PGAPPNAME");
  absl::SleepFor(absl::Seconds(1));
  PgConn admin = ConnectTo(dsn);
  const std::string of_app = absl::StrCat("FROM pg_stat_activity WHERE application_name = '",
                                          app, "' AND query LIKE ");
  const std::string own =
      Query(admin.get(), absl::StrCat("SELECT count(*) ", of_app, "'SELECT count(*) FROM pg_locks%'"));
  const std::string shared =
      Query(admin.get(), absl::StrCat("SELECT count(*) ", of_app, "'%AND pid IN (%'"));
  print_message("sessions whose last statement was a check of their own: %s, "
                "of all: %s\n", own.c_str(), shared.c_str());
  // Apart from a check that fell out of step, the sessions' last statement
  // is still their acquisition.
  assert_true(std::stoi(own) <= 1);
  assert_true(std::stoi(shared) >= 1);
  for (int i = 0; i < kLocks; ++i) assert_int_equal(losses[i].size(), 0);
  assert_int_equal(TerminateHolder(admin.get(), names[0]), 1);
  assert_true(losses[0].WaitUntil(NowSeconds() + 10));
  absl::SleepFor(absl::Seconds(1));
  ExpectOnlyFirstLost(held, 1, [&](size_t i) { return losses[i].size() != 0; });
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(SessionTerminated),
      cmocka_unit_test(ServerRestartedFast),
      cmocka_unit_test(ServerRestartedImmediate),
      cmocka_unit_test(HealthySessionIsNotReported),
      cmocka_unit_test(LocksOfAStoreAreCheckedByOneQuery),
  };
  return cmocka_run_group_tests_name("postgres_lost_lock", tests, nullptr, nullptr);
}
