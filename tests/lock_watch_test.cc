// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The watch on held locks (ipclock/lock_watch.h): leases renewed for many
// TTLs, a loss found and reported once, no report when nothing was lost,
// the Lock handed back, and the watch in a fork()ed child
// (lock_watch_test_fork.cc). The losses of each store's own objects (a
// deleted lock file, a removed segment, a flushed key, a terminated
// session) are tested with that store, and through `ipclock run` in
// cli_watch_test. Bounds are generous: the checks are about several
// intervals or TTLs, never about milliseconds.

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "ipclock/store_factory.h"
#include "ipclock/stores/flock_store.h"
#include "flock_test_util.h"
#include "ipclock/stores/in_memory_store.h"
#include "ipclock/diagnostics.h"
#include "ipclock/lock.h"
#include "ipclock/lock_guard.h"
#include "ipclock/lock_watch.h"
#include "ipclock/spi/store_interface.h"
#include "lock_watch_test.h"
#include "lock_watch_test_stores.h"
#include "loss_log.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::Diagnostic;
using ipclock::LockWatch;
using ipclock::WatchedLock;
using ipclock::WatchOptions;
using namespace ipclock_test;

constexpr absl::Duration kTtl = absl::Milliseconds(600);


// Polls `done` for up to `seconds`.
template <typename Fn>
bool Eventually(Fn done, double seconds = 10) {
  double until = NowSeconds() + seconds;
  while (NowSeconds() < until) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return done();
}

// A lock on `resource`, held, in a flock store on `dir`.
// `sink`, if set, is the store's diagnostic sink.
Lock HeldInDir(const std::string& dir, const std::string& resource,
               ipclock::DiagnosticSink sink = nullptr) {
  std::shared_ptr<ipclock::Store> store = FlockStoreIn(dir);
  store->SetDiagnosticSink(std::move(sink));
  return HeldOrFail(store, resource);
}

// Loses the lock HeldInDir() took: its file is deleted.
void DeleteLockFile(const std::string& dir, const std::string& resource) {
  assert_int_equal(unlink((dir + "/" + ipclock::FlockFileName(resource)).c_str()), 0);
}

void RenewsLeasesForManyTtls(void**) {
  auto store = ipclock::NewInMemoryStore();
  LockWatch watch;
  LossLog losses;
  std::string r = UniqueResource("kept");
  Lock lock = HeldOrFail(store, r, Ttl(kTtl));
  WatchedLock kept = losses.Watch(watch, std::move(lock), absl::Seconds(1));
  // A second lock on the same watch, so that one thread serves two.
  std::string r2 = UniqueResource("kept2");
  Lock lock2 = HeldOrFail(store, r2, Ttl(absl::Milliseconds(900)));
  WatchedLock kept2 = losses.Watch(watch, std::move(lock2), absl::Seconds(1));
  absl::SleepFor(kTtl * 4);
  Lock rival = LockOrFail(store, r, Ttl(kTtl)), rival2 = LockOrFail(store, r2, Ttl(kTtl));
  assert_false(TryOrFail(rival));
  assert_false(TryOrFail(rival2));
  assert_false(kept.lost());
  ASSERT_OK(kept.status());
  ASSERT_OK(kept.CheckNow());
  assert_true(kept.RemainingLifetime() > absl::ZeroDuration());
  assert_true(kept.fence().has_value());
  ASSERT_OK(kept.Release());
  ASSERT_OK(kept2.Release());
  assert_true(TryOrFail(rival));
  assert_int_equal(losses.size(), 0);
  ASSERT_CODE(kept.Release(), absl::StatusCode::kFailedPrecondition);
}

void FailedRenewalsLoseTheLockWhenTheLeaseRunsOut(void**) {
  auto store = std::make_shared<FailingRefreshStore>();
  LockWatch watch;
  LossLog losses;
  std::string r = UniqueResource("lost");
  Lock lock = HeldOrFail(store, r, Ttl(kTtl));
  WatchedLock kept = losses.Watch(watch, std::move(lock), absl::Seconds(5));
  assert_true(Eventually([&] { return store->refreshes.load() >= 2; }));
  assert_false(kept.lost());
  store->fail = true;
  // Renewals are retried while the lease lasts; once it has run out, the
  // lock is lost, well before the 5 s check interval.
  const double failed_at = NowSeconds();
  assert_true(Eventually([&] { return kept.lost(); }));
  assert_true(NowSeconds() - failed_at < 4);
  assert_true(store->refreshes.load() >= 3);
  ASSERT_CODE(kept.status(), absl::StatusCode::kAborted);
  assert_true(absl::StrContains(kept.status().message(), "connection refused"));
  // The report runs on a thread of its own: it may come a moment after
  // lost() turned true.
  assert_true(Eventually([&] { return losses.size() == 1; }));
  const Diagnostic loss = losses.first();
  assert_string_equal(loss.resource.c_str(), r.c_str());
  assert_true(absl::StrContains(loss.store, "failing-refresh"));
  // Nothing more happens to a lost lock.
  const int refreshes = store->refreshes.load();
  absl::SleepFor(kTtl);
  assert_int_equal(store->refreshes.load(), refreshes);
  assert_int_equal(losses.size(), 1);
  ipclock::DiagnosticSink quiet = ipclock::SetDefaultDiagnosticSink(nullptr);
  ASSERT_CODE(kept.Release(), absl::StatusCode::kAborted);
  ipclock::SetDefaultDiagnosticSink(quiet);
}

void DeletedLockFileIsReportedOnce(void**) {
  const std::string dir = MakeTempDir();
  LossLog losses;
  Lock lock = HeldInDir(dir, "deleted");
  WatchedLock watched =
      losses.Watch(LockWatch::Default(), std::move(lock), absl::Milliseconds(100));
  absl::SleepFor(absl::Milliseconds(300));
  assert_false(watched.lost());
  DeleteLockFile(dir, "deleted");
  assert_true(Eventually([&] { return watched.lost(); }));
  ASSERT_CODE(watched.status(), absl::StatusCode::kAborted);
  assert_true(absl::StrContains(watched.status().message(), "deleted"));
  absl::SleepFor(absl::Milliseconds(300));
  assert_int_equal(losses.size(), 1);
  // A release of a lost lock says so.
  ASSERT_CODE(watched.Release(), absl::StatusCode::kAborted);
}

// Once a WatchedLock is released, no report of it runs or is still running:
// its owner may free what the callback uses. A report under way when the
// release comes is waited for.
void ReleaseWaitsForAReportUnderWay(void**) {
  const std::string dir = MakeTempDir();
  Lock lock = HeldInDir(dir, "slow-report");
  std::atomic<bool> started{false};
  std::atomic<bool> ended{false};
  WatchOptions slow;
  slow.check_interval = absl::Milliseconds(50);
  slow.diagnostics = [&](const Diagnostic&) {
    started = true;
    absl::SleepFor(absl::Milliseconds(300));
    ended = true;
  };
  absl::StatusOr<WatchedLock> watched = LockWatch::Default().Watch(std::move(lock), slow);
  ASSERT_OK(watched);
  DeleteLockFile(dir, "slow-report");
  assert_true(Eventually([&] { return started.load(); }));
  ASSERT_CODE(watched->Release(), absl::StatusCode::kAborted);
  assert_true(ended.load());
}

// A sink that blocks delays no detection and no other lock's report: while
// the report of one lost lock is stuck in its sink, another lock of the
// same watch is found lost and reported.
void StuckSinkDelaysNoOtherLoss(void**) {
  const std::string dir = MakeTempDir();
  std::mutex mu;
  std::condition_variable cv;
  bool unstuck = false;
  std::atomic<bool> stuck_started{false};
  WatchOptions stuck;
  stuck.check_interval = absl::Hours(1);
  stuck.diagnostics = [&](const Diagnostic&) {
    stuck_started = true;
    std::unique_lock<std::mutex> guard(mu);
    cv.wait_for(guard, std::chrono::seconds(30), [&] { return unstuck; });
  };
  std::atomic<double> other_reported{0};
  WatchOptions other;
  other.check_interval = absl::Hours(1);
  other.diagnostics = [&](const Diagnostic&) { other_reported = NowSeconds(); };
  LockWatch watch;
  absl::StatusOr<WatchedLock> first = watch.Watch(HeldInDir(dir, "stuck-sink"), stuck);
  absl::StatusOr<WatchedLock> second = watch.Watch(HeldInDir(dir, "other-lock"), other);
  ASSERT_OK(first);
  ASSERT_OK(second);
  DeleteLockFile(dir, "stuck-sink");
  assert_true(Eventually([&] { return stuck_started.load(); }));
  const double deleted_at = NowSeconds();
  DeleteLockFile(dir, "other-lock");
  const bool reported = Eventually([&] { return other_reported.load() != 0; }, 10);
  {
    std::lock_guard<std::mutex> guard(mu);
    unstuck = true;
  }
  cv.notify_all();
  assert_true(reported);
  const double took = other_reported.load() - deleted_at;
  // The verdict is `reported` above, reached while the sink was still stuck;
  // how soon is the machine's speed, said but not judged.
  print_message("the other lock's loss, reported %.2f ms after it, while a sink was stuck\n",
                took * 1e3);
  assert_true(second->lost());
  ASSERT_CODE(first->Release(), absl::StatusCode::kAborted);
  ASSERT_CODE(second->Release(), absl::StatusCode::kAborted);
}

// A watch's sink may release its own WatchedLock (the release does not wait for
// the report it is part of).
void OnLostMayReleaseItsOwnLock(void**) {
  const std::string dir = MakeTempDir();
  Lock lock = HeldInDir(dir, "self-release");
  WatchedLock* self = nullptr;
  std::atomic<bool> released{false};
  std::mutex mu;
  WatchOptions o;
  o.check_interval = absl::Milliseconds(50);
  o.diagnostics = [&](const Diagnostic&) {
    {
      std::lock_guard<std::mutex> guard(mu);
      assert_non_null(self);
      ASSERT_CODE(self->Release(), absl::StatusCode::kAborted);
    }
    // Last, after `mu` is unlocked: once the test sees it, the test returns
    // and its stack, `mu` included, is gone.
    released = true;
  };
  absl::StatusOr<WatchedLock> watched = LockWatch::Default().Watch(std::move(lock), o);
  ASSERT_OK(watched);
  {
    std::lock_guard<std::mutex> guard(mu);
    self = &*watched;
  }
  DeleteLockFile(dir, "self-release");
  assert_true(Eventually([&] { return released.load(); }));
  ASSERT_CODE(watched->Release(), absl::StatusCode::kFailedPrecondition);
}

// The same when the loss is found by the owner's own CheckNow(): the sink
// runs inside that call and releases the WatchedLock the call was made on.
void OnLostFoundByCheckNowMayReleaseItsOwnLock(void**) {
  auto store = std::make_shared<FailingRefreshStore>();
  Lock lock = HeldOrFail(store, "self-release-in-check");
  WatchedLock* self = nullptr;
  int reports = 0;
  WatchOptions o;
  o.check_interval = absl::Hours(1);  // only CheckNow() looks
  o.diagnostics = [&](const Diagnostic& loss) {
    ++reports;
    assert_true(absl::IsAborted(loss.status));
    ASSERT_CODE(self->Release(), absl::StatusCode::kAborted);
  };
  LockWatch watch;
  absl::StatusOr<WatchedLock> watched = watch.Watch(std::move(lock), o);
  ASSERT_OK(watched);
  self = &*watched;
  store->gone = true;
  ASSERT_CODE(watched->CheckNow(), absl::StatusCode::kAborted);
  assert_int_equal(reports, 1);
  ASSERT_CODE(watched->Release(), absl::StatusCode::kFailedPrecondition);
}

// A watch without a sink of its own reports to the lock's store's sink, and
// to the process default when the store has none either.
void ReportWithoutWatchSinkGoesToStoreOrDefault(void**) {
  static std::mutex mu;
  static std::vector<std::string> by_default;
  static std::vector<Diagnostic> by_store;
  ipclock::DiagnosticSink previous =
      ipclock::SetDefaultDiagnosticSink([](const Diagnostic& d) {
        std::lock_guard<std::mutex> guard(mu);
        by_default.push_back(d.text);
      });
  WatchOptions fast;
  fast.check_interval = absl::Milliseconds(50);
  const std::string dir = MakeTempDir();
  Lock own = HeldInDir(dir, "store-sink", [](const Diagnostic& d) {
    std::lock_guard<std::mutex> guard(mu);
    by_store.push_back(d);
  });
  Lock plain = HeldInDir(dir, "default-sink");
  absl::StatusOr<WatchedLock> watched_own = LockWatch::Default().Watch(std::move(own), fast);
  ASSERT_OK(watched_own);
  absl::StatusOr<WatchedLock> watched = LockWatch::Default().Watch(std::move(plain), fast);
  ASSERT_OK(watched);
  DeleteLockFile(dir, "store-sink");
  DeleteLockFile(dir, "default-sink");
  assert_true(Eventually([&] { return watched_own->lost() && watched->lost(); }));
  watched_own->Release().IgnoreError();
  watched->Release().IgnoreError();
  ipclock::SetDefaultDiagnosticSink(previous);
  std::lock_guard<std::mutex> guard(mu);
  assert_int_equal(by_store.size(), 1);
  assert_true(by_store[0].kind == ipclock::DiagnosticKind::kLockLost);
  assert_string_equal(by_store[0].resource.c_str(), "store-sink");
  ASSERT_CODE(by_store[0].status, absl::StatusCode::kAborted);
  assert_int_equal(by_default.size(), 1);
  assert_true(absl::StartsWith(by_default[0], "ipclock: warning: lost a held lock: "));
  assert_true(absl::StrContains(by_default[0], "default-sink"));
}

// A healthy lock checked a hundred times is never reported.
void NoFalseAlarm(void**) {
  auto store = FlockStoreIn(MakeTempDir());
  auto memory = ipclock::NewInMemoryStore();
  LossLog losses;
  Lock file_lock = HeldOrFail(store, "healthy");
  Lock leased = HeldOrFail(memory, "healthy", Ttl(absl::Milliseconds(300)));
  LockWatch watch;
  absl::StatusOr<WatchedLock> a = watch.Watch(std::move(file_lock), losses.Options(absl::Milliseconds(20)));
  absl::StatusOr<WatchedLock> b = watch.Watch(std::move(leased), losses.Options(absl::Milliseconds(20)));
  ASSERT_OK(a);
  ASSERT_OK(b);
  // Other files in the lock dir come and go meanwhile.
  for (int i = 0; i < 20; ++i) {
    Lock other = HeldOrFail(store, absl::StrCat("other-", i));
    absl::SleepFor(absl::Milliseconds(100));
  }
  assert_false(a->lost());
  assert_false(b->lost());
  assert_int_equal(losses.size(), 0);
  ASSERT_OK(a->Release());
  ASSERT_OK(b->Release());
}

// The longest check interval still renews a lease; a longer one, whose
// sums of times would overflow, is refused.
void LongestCheckIntervalStillRenews(void**) {
  auto store = ipclock::NewInMemoryStore();
  LockWatch watch;
  const std::string r = UniqueResource("longest");
  WatchOptions longest;
  longest.check_interval = ipclock::kMaxCheckInterval;
  absl::StatusOr<WatchedLock> kept = watch.Watch(HeldOrFail(store, r, Ttl(kTtl)), longest);
  ASSERT_OK(kept);
  absl::SleepFor(kTtl * 3);
  Lock rival = LockOrFail(store, r, Ttl(kTtl));
  assert_false(TryOrFail(rival));
  assert_false(kept->lost());
  ASSERT_OK(kept->Release());
  WatchOptions longer;
  longer.check_interval = ipclock::kMaxCheckInterval + absl::Seconds(1);
  Lock lock = HeldOrFail(store, UniqueResource("longer"), Ttl(kTtl));
  ASSERT_CODE(watch.Watch(std::move(lock), longer), absl::StatusCode::kInvalidArgument);
  assert_true(lock.is_acquired());
  ASSERT_OK(lock.Release());
}

void TakeHandsTheLockBack(void**) {
  auto store = std::make_shared<FailingRefreshStore>();
  LockWatch watch;
  std::string r = UniqueResource("take");
  Lock unheld = LockOrFail(store, r, Ttl(kTtl));
  ASSERT_CODE(watch.Watch(std::move(unheld)), absl::StatusCode::kFailedPrecondition);
  Lock lock = HeldOrFail(store, r, Ttl(kTtl));
  WatchOptions zero;
  zero.check_interval = absl::ZeroDuration();
  Lock lock2 = LockOrFail(store, UniqueResource("take2"), Ttl(kTtl));
  {
    // A refused Watch() loses nothing: the lock stays the caller's, held,
    // and its guard still releases it.
    absl::StatusOr<ipclock::LockGuard> guard = ipclock::LockGuard::Acquire(lock2, absl::ZeroDuration());
    ASSERT_OK(guard);
    ASSERT_CODE(watch.Watch(std::move(lock2), zero), absl::StatusCode::kInvalidArgument);
    assert_true(lock2.is_acquired());
    ASSERT_OK(lock2.CheckAcquired());
  }
  assert_false(lock2.is_acquired());
  absl::StatusOr<WatchedLock> kept = watch.Watch(std::move(lock));
  ASSERT_OK(kept);
  absl::StatusOr<Lock> back = kept->Take();
  ASSERT_OK(back);
  assert_true(back->is_acquired());
  const int refreshes = store->refreshes.load();
  absl::SleepFor(kTtl / 2);
  assert_int_equal(store->refreshes.load(), refreshes);  // the watch let go
  ASSERT_OK(back->Release());
  ASSERT_CODE(kept->Take(), absl::StatusCode::kFailedPrecondition);
}

void DestroyedWatchedLockReleases(void**) {
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("kdtor");
  LockWatch watch;
  {
    Lock lock = HeldOrFail(store, r, Ttl(kTtl));
    absl::StatusOr<WatchedLock> kept = watch.Watch(std::move(lock));
    ASSERT_OK(kept);
  }
  Lock rival = HeldOrFail(store, r, Ttl(kTtl));
}

// Locks watched one after another, 50 ms apart, are soon checked together:
// a check that is due takes along those due within half an interval, so the
// watch wakes once an interval rather than once a lock. None is checked
// later than its interval.
void ChecksOfManyLocksFallIntoStep(void**) {
  auto store = std::make_shared<CountedCheckStore>(/*tells=*/false);
  LockWatch watch;
  LossLog losses;
  std::vector<WatchedLock> held;
  for (int i = 0; i < 8; ++i) {
    Lock lock = HeldOrFail(store, UniqueResource("step"));
    WatchedLock w = losses.Watch(watch, std::move(lock), absl::Milliseconds(500));
    held.push_back(std::move(w));
    absl::SleepFor(absl::Milliseconds(50));
  }
  absl::SleepFor(absl::Seconds(1));
  const double since = NowSeconds();
  absl::SleepFor(absl::Milliseconds(1500));
  std::vector<double> checks = store->ChecksSince(since);
  // Checks less than 50 ms apart are one wake-up's.
  int wakeups = checks.empty() ? 0 : 1;
  for (size_t i = 1; i < checks.size(); ++i) {
    if (checks[i] - checks[i - 1] > 0.05) ++wakeups;
  }
  // In step: about 3 wake-ups in 1.5 s; out of step, 8 each 500 ms.
  assert_true(wakeups <= 8);
  // Each lock is checked about once an interval: 24 in all, none skipped.
  assert_true(checks.size() >= 16);
  for (WatchedLock& w : held) ASSERT_OK(w.Release());
  assert_int_equal(losses.size(), 0);
}

// A store whose descriptor tells of every loss is checked ten times less
// often while its checks find the lock held; at once when the descriptor
// fires; and at the interval again while a check cannot tell.
void StoreThatTellsIsCheckedLessOften(void**) {
  auto store = std::make_shared<CountedCheckStore>(/*tells=*/true);
  LockWatch watch;
  LossLog losses;
  Lock lock = HeldOrFail(store, UniqueResource("told"));
  WatchedLock w = losses.Watch(watch, std::move(lock), absl::Milliseconds(100));
  // The first check finds it held; the next is a second away.
  assert_true(Eventually([&] { return store->ChecksSince(0).size() >= 1; }));
  double since = NowSeconds();
  absl::SleepFor(absl::Milliseconds(700));
  // At the interval, 7 checks; as a safety net, at most 1.
  assert_true(store->ChecksSince(since).size() <= 2);
  // A check that cannot tell: back to the interval.
  store->unsure = true;
  store->Ring();
  assert_true(Eventually([&] { return store->ChecksSince(since).size() >= 1; }));
  since = NowSeconds();
  absl::SleepFor(absl::Milliseconds(1000));
  assert_true(store->ChecksSince(since).size() >= 4);
  store->unsure = false;
  absl::SleepFor(absl::Milliseconds(300));
  // The descriptor's word is checked at once, however rare the safety net.
  store->gone = true;
  store->Ring();
  assert_true(Eventually([&] { return w.lost(); }, 2));
  // lost() turns true before the report, which runs on a thread of its own.
  assert_true(losses.WaitUntil(NowSeconds() + 2));
  absl::SleepFor(absl::Milliseconds(100));  // room for a second report, which must not come
  assert_int_equal(losses.size(), 1);
  ipclock::DiagnosticSink quiet = ipclock::SetDefaultDiagnosticSink(nullptr);
  ASSERT_CODE(w.Release(), absl::StatusCode::kAborted);
  ipclock::SetDefaultDiagnosticSink(quiet);
}

// A flock lock on a local filesystem (tmpfs here): inotify on its file and
// dir, the probe of the dir's path and the mount table tell of every loss,
// so its interval check is a safety net, ten times less often while it
// finds the lock held; a loss is still found at once.
void FlockLockIsCheckedAsASafetyNet(void**) {
  char tmpl[] = "/dev/shm/ipclock-test-XXXXXX";
  assert_non_null(mkdtemp(tmpl));
  const std::string dir = tmpl;
  {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> flock =
        ipclock::StoreFromDsn("flock://" + dir + "?removeipc=ignore");
    ASSERT_OK(flock);
    auto store = std::make_shared<CountedCheckStore>(*flock);
    LockWatch watch;
    LossLog losses;
    const std::string r = UniqueResource("safety-net");
    Lock lock = HeldOrFail(store, r);
    WatchedLock w = losses.Watch(watch, std::move(lock), absl::Milliseconds(100));
    assert_true(Eventually([&] { return store->ChecksSince(0).size() >= 1; }));
    const double since = NowSeconds();
    absl::SleepFor(absl::Milliseconds(700));
    // At the interval, 7 checks; as a safety net, at most 1.
    assert_true(store->ChecksSince(since).size() <= 2);
    const std::string file = dir + "/" + ipclock::FlockFileName(r);
    assert_int_equal(unlink(file.c_str()), 0);
    assert_true(Eventually([&] { return w.lost(); }, 2));
    // The report comes on a thread of its own, a moment after lost().
    assert_true(losses.WaitUntil(NowSeconds() + 2));
    assert_int_equal(losses.size(), 1);
    ipclock::DiagnosticSink quiet = ipclock::SetDefaultDiagnosticSink(nullptr);
    ASSERT_CODE(w.Release(), absl::StatusCode::kAborted);
    ipclock::SetDefaultDiagnosticSink(quiet);
  }
  assert_int_equal(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(RenewsLeasesForManyTtls),
      cmocka_unit_test(FlockLockIsCheckedAsASafetyNet),
      cmocka_unit_test(FailedRenewalsLoseTheLockWhenTheLeaseRunsOut),
      cmocka_unit_test(DeletedLockFileIsReportedOnce),
      cmocka_unit_test(ReleaseWaitsForAReportUnderWay),
      cmocka_unit_test(OnLostMayReleaseItsOwnLock),
      cmocka_unit_test(OnLostFoundByCheckNowMayReleaseItsOwnLock),
      cmocka_unit_test(ReportWithoutWatchSinkGoesToStoreOrDefault),
      cmocka_unit_test(NoFalseAlarm),
      cmocka_unit_test(StuckSinkDelaysNoOtherLoss),
      cmocka_unit_test(LongestCheckIntervalStillRenews),
      cmocka_unit_test(TakeHandsTheLockBack),
      cmocka_unit_test(DestroyedWatchedLockReleases),
      cmocka_unit_test(ForkedChildWatchesItsOwnLocks),
      cmocka_unit_test(ForkedChildsCopyNeverWaitsForTheWatch),
      cmocka_unit_test(ChecksOfManyLocksFallIntoStep),
      cmocka_unit_test(StoreThatTellsIsCheckedLessOften),
  };
  return cmocka_run_group_tests_name("lock_watch", tests, nullptr, nullptr);
}
