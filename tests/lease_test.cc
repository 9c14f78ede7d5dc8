// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Leases at the Lock level, on the in-memory store (expiring) with short
// TTLs: a lock released after its lease ran out is reported (Aborted from
// Release, and the lease-overrun handler once per lock), and a LeaseKeeper
// keeps a lease alive for many TTLs, marks a lock lost when a refresh fails,
// and hands locks back. Bounds are generous: the checks are about several
// TTLs, never about milliseconds.

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "ipclock/in_memory_store.h"
#include "ipclock/lease_keeper.h"
#include "ipclock/lease_overrun.h"
#include "ipclock/lock.h"
#include "ipclock/store_interface.h"
#include "ipclock/store.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Key;
using ipclock::KeptLock;
using ipclock::LeaseKeeper;
using ipclock::LeaseOverrun;
using ipclock::Lock;
using ipclock::LockMode;
using ipclock::LockOptions;
using ipclock::Store;
using namespace ipclock_test;

constexpr absl::Duration kTtl = absl::Milliseconds(600);

LockOptions Ttl(absl::Duration ttl) {
  LockOptions options;
  options.ttl = ttl;
  return options;
}

// Collects the reports from construction on; the destructor puts the
// default handler back. The reports live in static storage, so a test that
// fails (and longjmps past the destructor) leaves a handler that still works.
class OverrunRecorder {
 public:
  OverrunRecorder() {
    {
      std::lock_guard<std::mutex> guard(mu_);
      seen_.clear();
    }
    ipclock::SetLeaseOverrunHandler([](const LeaseOverrun& o) {
      std::lock_guard<std::mutex> guard(mu_);
      seen_.push_back(o);
    });
  }
  ~OverrunRecorder() { ipclock::SetLeaseOverrunHandler(ipclock::WriteLeaseOverrunMessage); }
  std::vector<LeaseOverrun> seen() {
    std::lock_guard<std::mutex> guard(mu_);
    return seen_;
  }

 private:
  static std::mutex mu_;
  static std::vector<LeaseOverrun> seen_;
};
std::mutex OverrunRecorder::mu_;
std::vector<LeaseOverrun> OverrunRecorder::seen_;

// An in-memory store whose refreshes fail on demand, as a server that went
// away would.
class FlakyStore final : public Store {
 public:
  FlakyStore() : inner_(ipclock::NewInMemoryStore()) {}
  absl::string_view name() const override { return "flaky"; }
  ipclock::Capabilities capabilities() const override { return inner_->capabilities(); }
  absl::StatusOr<bool> Save(Key& key, LockMode mode, ipclock::Deadline d) override {
    return ipclock::StoreCalls::Save(*inner_, key, mode, d);
  }
  absl::Status PutOffExpiration(Key& key, absl::Duration ttl) override {
    ++refreshes;
    if (fail) return absl::UnavailableError("flaky: connection refused");
    return ipclock::StoreCalls::PutOffExpiration(*inner_, key, ttl);
  }
  absl::Status Delete(Key& key) override { return ipclock::StoreCalls::Delete(*inner_, key); }
  absl::StatusOr<bool> Exists(Key& key) override { return ipclock::StoreCalls::Exists(*inner_, key); }

  std::atomic<bool> fail{false};
  std::atomic<int> refreshes{0};

 private:
  std::shared_ptr<Store> inner_;
};

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

// --- Overrun reports ------------------------------------------------------------

void OverrunIsReportedOnRelease(void**) {
  OverrunRecorder recorder;
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("overrun");
  Lock lock = LockOrFail(store, r, Ttl(absl::Milliseconds(100)));
  assert_true(TryOrFail(lock));
  absl::SleepFor(absl::Milliseconds(400));
  // The store let a rival in meanwhile; the late release must not touch it.
  Lock rival = LockOrFail(store, r, Ttl(kTtl));
  assert_true(TryOrFail(rival));
  absl::Status s = lock.Release();
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  assert_true(absl::StrContains(s.message(), "before release"));
  assert_false(lock.is_acquired());
  std::vector<LeaseOverrun> seen = recorder.seen();
  assert_int_equal(seen.size(), 1);
  assert_string_equal(seen[0].resource.c_str(), r.c_str());
  assert_true(seen[0].overrun >= absl::Milliseconds(200));
  assert_true(seen[0].ttl == absl::Milliseconds(100));
  // Once per lock.
  ASSERT_OK(lock.Release());
  assert_int_equal(recorder.seen().size(), 1);
  ASSERT_OK(rival.CheckAcquired());
}

void DestructorReportsToo(void**) {
  OverrunRecorder recorder;
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("dtor");
  {
    Lock lock = LockOrFail(store, r, Ttl(absl::Milliseconds(50)));
    assert_true(TryOrFail(lock));
    absl::SleepFor(absl::Milliseconds(200));
  }
  assert_int_equal(recorder.seen().size(), 1);
  // A release in time says nothing.
  {
    Lock lock = LockOrFail(store, r, Ttl(kTtl));
    assert_true(TryOrFail(lock));
    ASSERT_OK(lock.Release());
  }
  assert_int_equal(recorder.seen().size(), 1);
}

void DefaultHandlerWritesOneLine(void**) {
  ipclock::SetLeaseOverrunHandler(ipclock::WriteLeaseOverrunMessage);
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("stderr");
  Lock lock = LockOrFail(store, r, Ttl(absl::Milliseconds(50)));
  assert_true(TryOrFail(lock));
  absl::SleepFor(absl::Milliseconds(200));
  absl::Status s;
  std::string out = CaptureStderr([&] {
    s = lock.Release();
    s.Update(lock.Release());  // no second line
  });
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  assert_true(absl::StrContains(out, r));
  assert_true(absl::StrContains(out, "before release"));
  assert_int_equal(std::count(out.begin(), out.end(), '\n'), 1);
}

// --- LeaseKeeper -------------------------------------------------------------------

void KeeperKeepsLeaseAlive(void**) {
  OverrunRecorder recorder;
  auto store = ipclock::NewInMemoryStore();
  LeaseKeeper keeper;
  std::string r = UniqueResource("kept");
  Lock lock = LockOrFail(store, r, Ttl(kTtl));
  assert_true(TryOrFail(lock));
  absl::StatusOr<KeptLock> kept = keeper.Keep(std::move(lock));
  ASSERT_OK(kept);
  // A second lock in the same keeper, so the thread serves two.
  std::string r2 = UniqueResource("kept2");
  Lock lock2 = LockOrFail(store, r2, Ttl(absl::Milliseconds(900)));
  assert_true(TryOrFail(lock2));
  absl::StatusOr<KeptLock> kept2 = keeper.Keep(std::move(lock2));
  ASSERT_OK(kept2);
  absl::SleepFor(kTtl * 4);
  Lock rival = LockOrFail(store, r, Ttl(kTtl)), rival2 = LockOrFail(store, r2, Ttl(kTtl));
  assert_false(TryOrFail(rival));
  assert_false(TryOrFail(rival2));
  assert_false(kept->lost());
  ASSERT_OK(kept->status());
  assert_true(kept->RemainingLifetime() > absl::ZeroDuration());
  assert_true(kept->fence().has_value());
  ASSERT_OK(kept->Release());
  ASSERT_OK(kept2->Release());
  assert_true(TryOrFail(rival));
  assert_int_equal(recorder.seen().size(), 0);
  ASSERT_CODE(kept->Release(), absl::StatusCode::kFailedPrecondition);
}

void RefreshFailureMarksLockLost(void**) {
  auto store = std::make_shared<FlakyStore>();
  std::mutex mu;
  std::vector<ipclock::LostLease> lost;
  ipclock::LeaseKeeperOptions options;
  options.on_lost = [&](const ipclock::LostLease& l) {
    std::lock_guard<std::mutex> guard(mu);
    lost.push_back(l);
  };
  LeaseKeeper keeper(options);
  std::string r = UniqueResource("lost");
  Lock lock = LockOrFail(store, r, Ttl(kTtl));
  assert_true(TryOrFail(lock));
  absl::StatusOr<KeptLock> kept = keeper.Keep(std::move(lock));
  ASSERT_OK(kept);
  assert_true(Eventually([&] { return store->refreshes.load() >= 2; }));
  assert_false(kept->lost());
  store->fail = true;
  assert_true(Eventually([&] { return kept->lost(); }));
  ASSERT_CODE(kept->status(), absl::StatusCode::kUnavailable);
  {
    std::lock_guard<std::mutex> guard(mu);
    assert_int_equal(lost.size(), 1);
    assert_string_equal(lost[0].resource.c_str(), r.c_str());
    assert_int_equal(static_cast<int>(lost[0].error.code()),
                     static_cast<int>(absl::StatusCode::kUnavailable));
  }
  // No more refreshes of a lost lock.
  const int refreshes = store->refreshes.load();
  absl::SleepFor(kTtl);
  assert_int_equal(store->refreshes.load(), refreshes);
  OverrunRecorder quiet;  // the lease may have run out by now
  absl::Status released = kept->Release();
  assert_true(released.ok() || released.code() == absl::StatusCode::kAborted);
}

void TakeHandsTheLockBack(void**) {
  auto store = std::make_shared<FlakyStore>();
  LeaseKeeper keeper;
  std::string r = UniqueResource("take");
  Lock unheld = LockOrFail(store, r, Ttl(kTtl));
  ASSERT_CODE(keeper.Keep(std::move(unheld)), absl::StatusCode::kFailedPrecondition);
  Lock lock = LockOrFail(store, r, Ttl(kTtl));
  assert_true(TryOrFail(lock));
  absl::StatusOr<KeptLock> kept = keeper.Keep(std::move(lock));
  ASSERT_OK(kept);
  absl::StatusOr<Lock> back = kept->Take();
  ASSERT_OK(back);
  assert_true(back->is_acquired());
  const int refreshes = store->refreshes.load();
  absl::SleepFor(kTtl / 2);
  assert_int_equal(store->refreshes.load(), refreshes);  // keeper let go
  ASSERT_OK(back->Release());
  ASSERT_CODE(kept->Take(), absl::StatusCode::kFailedPrecondition);
}

void DestroyedKeptLockReleases(void**) {
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("kdtor");
  LeaseKeeper keeper;
  {
    Lock lock = LockOrFail(store, r, Ttl(kTtl));
    assert_true(TryOrFail(lock));
    absl::StatusOr<KeptLock> kept = keeper.Keep(std::move(lock));
    ASSERT_OK(kept);
  }
  Lock rival = LockOrFail(store, r, Ttl(kTtl));
  assert_true(TryOrFail(rival));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(OverrunIsReportedOnRelease),
      cmocka_unit_test(DestructorReportsToo),
      cmocka_unit_test(DefaultHandlerWritesOneLine),
      cmocka_unit_test(KeeperKeepsLeaseAlive),
      cmocka_unit_test(RefreshFailureMarksLockLost),
      cmocka_unit_test(TakeHandsTheLockBack),
      cmocka_unit_test(DestroyedKeptLockReleases),
  };
  return cmocka_run_group_tests_name("lease", tests, nullptr, nullptr);
}
