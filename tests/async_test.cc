// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// AsyncWaiter (ipclock/async.h): acquisitions driven from an epoll loop
// complete when another process releases, end at their deadline, leave
// nothing held when cancelled (also when the release races the
// cancellation), and scale to 1000 waits on one thread. Every test runs on
// the flock and shm stores, once with io_uring (skipped where the kernel
// refuses it) and once with helper threads only.
//
// The loop below calls ProcessReady() only when epoll reports the waiter's
// descriptor readable, so a missed notification shows up as a timeout.

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ipclock/async.h"
#include "ipclock/lock.h"
#include "ipclock/store_factory.h"
#include "test_util.h"

namespace ipclock_test {
namespace {

using ipclock::AsyncResult;
using ipclock::AsyncWaiter;
using ipclock::AsyncWaiterOptions;
using ipclock::Lock;
using ipclock::LockMode;
using ipclock::Store;

// The variant the current group runs.
std::string g_dsn;
AsyncWaiterOptions::Backend g_backend = AsyncWaiterOptions::Backend::kThreads;

bool IoUringWorks() {
  static const bool works = [] {
    AsyncWaiterOptions o;
    o.backend = AsyncWaiterOptions::Backend::kIoUring;
    return AsyncWaiter::Create(o).ok();
  }();
  return works;
}

#define SKIP_WITHOUT_BACKEND()                                                 \
  do {                                                                         \
    if (g_backend == AsyncWaiterOptions::Backend::kIoUring && !IoUringWorks()) { \
      print_message("skipped: io_uring futex waits are not available here\n"); \
      skip();                                                                  \
    }                                                                          \
  } while (0)

std::unique_ptr<AsyncWaiter> MakeWaiter() {
  AsyncWaiterOptions o;
  o.backend = g_backend;
  absl::StatusOr<std::unique_ptr<AsyncWaiter>> w = AsyncWaiter::Create(o);
  ASSERT_OK(w);
  assert_int_equal((*w)->uses_io_uring(),
                   g_backend == AsyncWaiterOptions::Backend::kIoUring);
  return *std::move(w);
}

// Runs the loop until `done()` or `timeout_sec`; false on timeout.
bool RunUntil(AsyncWaiter& waiter, const std::function<bool()>& done, double timeout_sec) {
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  assert_true(ep >= 0);
  struct epoll_event ev = {};
  ev.events = EPOLLIN;
  assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, waiter.fd(), &ev), 0);
  const double end = NowSeconds() + timeout_sec;
  bool ok = true;
  while (!done()) {
    if (NowSeconds() > end) {
      ok = false;
      break;
    }
    struct epoll_event out;
    if (epoll_wait(ep, &out, 1, 20) > 0) waiter.ProcessReady();
  }
  close(ep);
  return ok;
}

// For forked children: a Lock on `resource` through a store of their own
// on the test's DSN; an error if either cannot be made.
absl::StatusOr<Lock> LockInChild(const std::string& resource) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(g_dsn);
  if (!store.ok()) return store.status();
  return Lock::Create(*store, resource);
}

// A process that takes `resource` from its own store, says so on `held`,
// and releases when told on `release`. Exit 0 if all went well.
pid_t StartHolder(const std::string& resource, Signal& held, Signal& release) {
  return ForkChild([&]() -> int {
    absl::StatusOr<Lock> lock = LockInChild(resource);
    if (!lock.ok()) return 3;
    if (!lock->Acquire(absl::Seconds(30)).ok()) return 4;
    held.Notify();
    if (release.Wait(60) == 0) return 5;
    if (!lock->Release().ok()) return 6;
    return 0;
  });
}

// Whether another process can take `resource` at once (exit 0) or not (1).
int TryInChild(const std::string& resource) {
  pid_t pid = ForkChild([&]() -> int {
    absl::StatusOr<Lock> lock = LockInChild(resource);
    if (!lock.ok()) return 3;
    absl::StatusOr<bool> got = lock->TryAcquire();
    if (!got.ok()) return 4;
    return *got ? 0 : 1;
  });
  return WaitChild(pid);
}

// `resource` held by another process until Release().
class HeldElsewhere {
 public:
  explicit HeldElsewhere(const std::string& resource)
      : resource_(resource), pid_(StartHolder(resource, held_, release_)) {
    assert_int_equal(held_.Wait(), 'x');
  }
  void Release() { release_.Notify(); }
  // The holder's exit code (0: it held and released as told).
  int Wait() { return WaitChild(pid_); }
  // Release(), a clean exit, and the resource free afterwards.
  void ReleaseAndExpectFree() {
    Release();
    assert_int_equal(Wait(), 0);
    assert_int_equal(TryInChild(resource_), 0);
  }

 private:
  const std::string resource_;
  Signal held_, release_;
  pid_t pid_;
};

struct Outcome {
  int calls = 0;
  absl::Status status;
};

// Runs `waiter` until `out`'s callback has run, for up to `seconds`;
// whether it ran.
bool RunUntilCalled(AsyncWaiter& waiter, const Outcome& out, double seconds) {
  return RunUntil(waiter, [&] { return out.calls > 0; }, seconds);
}

ipclock::AsyncCallback Record(Outcome* out) {
  return [out](const AsyncResult& r) {
    ++out->calls;
    out->status = r.status;
  };
}

// A wait about to start through the test's store: a Lock on a fresh
// resource named after `tag` that another process holds, the waiter to run
// the wait, and what its callback reports.
struct WaitBehindHolder {
  explicit WaitBehindHolder(const char* tag)
      : resource(UniqueResource(tag)), holder(resource), lock(LockOrFail(store, resource)) {}
  const std::shared_ptr<Store> store = OpenStoreOrFail(g_dsn);
  const std::string resource;
  HeldElsewhere holder;
  const std::unique_ptr<AsyncWaiter> waiter = MakeWaiter();
  Lock lock;
  Outcome out;
};

// --- Tests --------------------------------------------------------------------

void CompletesWhenAnotherProcessReleases(void**) {
  SKIP_WITHOUT_BACKEND();
  WaitBehindHolder w("async-release");
  ASSERT_OK(w.waiter->Start(w.lock, LockMode::kExclusive, absl::Seconds(60), Record(&w.out)));
  assert_int_equal(w.waiter->pending(), 1);
  // Held elsewhere: nothing completes. (The Lock itself is not to be
  // touched while its wait is pending.)
  assert_false(RunUntilCalled(*w.waiter, w.out, 0.3));

  w.holder.Release();
  assert_true(RunUntilCalled(*w.waiter, w.out, 30));
  assert_int_equal(w.out.calls, 1);
  ASSERT_OK(w.out.status);
  assert_true(w.lock.is_acquired());
  assert_int_equal(w.waiter->pending(), 0);
  assert_int_equal(w.holder.Wait(), 0);
  assert_int_equal(TryInChild(w.resource), 1);
  ASSERT_OK(w.lock.Release());
  assert_int_equal(TryInChild(w.resource), 0);
}

void FreeLockCompletesFromProcessReady(void**) {
  SKIP_WITHOUT_BACKEND();
  std::shared_ptr<Store> store = OpenStoreOrFail(g_dsn);
  std::unique_ptr<AsyncWaiter> waiter = MakeWaiter();
  Lock lock = LockOrFail(store, UniqueResource("async-free"));
  Outcome out;
  ASSERT_OK(waiter->Start(lock, LockMode::kExclusive, absl::ZeroDuration(), Record(&out)));
  // Callbacks run only from ProcessReady(), never inside Start().
  assert_int_equal(out.calls, 0);
  assert_true(RunUntilCalled(*waiter, out, 10));
  ASSERT_OK(out.status);
  assert_true(lock.is_acquired());
  // A second Start on the same Lock while one is pending is refused.
  Lock other = LockOrFail(store, UniqueResource("async-free-2"));
  Outcome out2;
  ASSERT_OK(waiter->Start(other, LockMode::kExclusive, absl::Seconds(1), Record(&out2)));
  ASSERT_CODE(waiter->Start(other, LockMode::kExclusive, absl::Seconds(1), Record(&out2)),
              absl::StatusCode::kFailedPrecondition);
  assert_true(RunUntilCalled(*waiter, out2, 10));
  ASSERT_OK(out2.status);
  assert_int_equal(out2.calls, 1);
}

void DeadlineExpiresOnTime(void**) {
  SKIP_WITHOUT_BACKEND();
  WaitBehindHolder w("async-deadline");
  const double t0 = NowSeconds();
  ASSERT_OK(
      w.waiter->Start(w.lock, LockMode::kExclusive, absl::Milliseconds(300), Record(&w.out)));
  assert_true(RunUntilCalled(*w.waiter, w.out, 30));
  const double elapsed = NowSeconds() - t0;
  ASSERT_CODE(w.out.status, absl::StatusCode::kDeadlineExceeded);
  assert_false(w.lock.is_acquired());
  // Never early; the upper bound only catches a deadline that was lost.
  if (elapsed < 0.299 || elapsed > 10) fail_msg("deadline after %.3f s", elapsed);

  w.holder.ReleaseAndExpectFree();
}

void CancelLeavesNothingHeld(void**) {
  SKIP_WITHOUT_BACKEND();
  WaitBehindHolder w("async-cancel");
  absl::StatusOr<ipclock::AsyncId> id =
      w.waiter->Start(w.lock, LockMode::kExclusive, absl::InfiniteDuration(), Record(&w.out));
  ASSERT_OK(id);
  assert_false(RunUntilCalled(*w.waiter, w.out, 0.1));
  ASSERT_OK(w.waiter->Cancel(*id));
  assert_true(RunUntilCalled(*w.waiter, w.out, 30));
  ASSERT_CODE(w.out.status, absl::StatusCode::kCancelled);
  assert_false(w.lock.is_acquired());
  // Its callback has run: the id is gone.
  ASSERT_CODE(w.waiter->Cancel(*id), absl::StatusCode::kNotFound);

  w.holder.ReleaseAndExpectFree();
}

// The holder releases just as Cancel() is called; whichever wins, the
// outcome is Cancelled and the lock is free afterwards.
void CancelRacingReleaseLeavesNothingHeld(void**) {
  SKIP_WITHOUT_BACKEND();
  std::shared_ptr<Store> store = OpenStoreOrFail(g_dsn);
  std::unique_ptr<AsyncWaiter> waiter = MakeWaiter();
  for (int i = 0; i < 30; ++i) {
    const std::string resource = UniqueResource("async-race");
    HeldElsewhere holder(resource);
    Lock lock = LockOrFail(store, resource);
    Outcome out;
    absl::StatusOr<ipclock::AsyncId> id =
        waiter->Start(lock, LockMode::kExclusive, absl::Seconds(60), Record(&out));
    ASSERT_OK(id);
    // Let the wait be armed (or the helper be inside the store's wait).
    waiter->ProcessReady();
    usleep(5000);
    holder.Release();
    if (i % 3 == 1) usleep(50 * (i + 1));  // vary who wins
    if (i % 3 == 2) {
      assert_int_equal(holder.Wait(), 0);  // released for sure
      usleep(2000);
    }
    ASSERT_OK(waiter->Cancel(*id));
    assert_true(RunUntilCalled(*waiter, out, 30));
    ASSERT_CODE(out.status, absl::StatusCode::kCancelled);
    assert_false(lock.is_acquired());
    if (i % 3 != 2) assert_int_equal(holder.Wait(), 0);
    if (TryInChild(resource) != 0) fail_msg("iteration %d: the lock stayed held", i);
  }
  assert_int_equal(waiter->pending(), 0);
}

// 1000 Locks on one resource, one holder elsewhere; each callback releases,
// which must wake the next waiter, until all 1000 have had the lock.
void ThousandWaitsOnOneThread(void**) {
  SKIP_WITHOUT_BACKEND();
  constexpr int kWaits = 1000;
  std::shared_ptr<Store> store = OpenStoreOrFail(g_dsn);
  const std::string resource = UniqueResource("async-1000");
  HeldElsewhere holder(resource);

  std::unique_ptr<AsyncWaiter> waiter = MakeWaiter();
  std::vector<Lock> locks;
  locks.reserve(kWaits);
  for (int i = 0; i < kWaits; ++i) locks.push_back(LockOrFail(store, resource));
  int acquired = 0;
  int failed = 0;
  std::string first_error;
  for (Lock& lock : locks) {
    ASSERT_OK(waiter->Start(lock, LockMode::kExclusive, absl::Seconds(240),
                            [&](const AsyncResult& r) {
                              if (!r.status.ok()) {
                                if (failed++ == 0) first_error = r.status.ToString();
                                return;
                              }
                              ++acquired;
                              // Released on the loop's thread, which took it.
                              if (!r.lock->Release().ok()) ++failed;
                            }));
  }
  assert_int_equal(waiter->pending(), kWaits);
  holder.Release();
  assert_int_equal(holder.Wait(), 0);
  const bool done =
      RunUntil(*waiter, [&] { return acquired + failed == kWaits; }, 240);
  if (!done || failed != 0) {
    fail_msg("%d acquired, %d failed (%s)", acquired, failed, first_error.c_str());
  }
  assert_int_equal(waiter->pending(), 0);
  assert_int_equal(TryInChild(resource), 0);
}

// A blocking waiter in another process queues behind our async wait; the
// holder's release wakes ours first (futex queues are FIFO), and we then
// cancel, or destroy the waiter, without taking the lock. The wake must be
// passed on, or the other process would sleep until its deadline.
void AbandonedWakeIsPassedOn(void**) {
  SKIP_WITHOUT_BACKEND();
  std::shared_ptr<Store> store = OpenStoreOrFail(g_dsn);
  for (int destroy = 0; destroy < 2; ++destroy) {
    const std::string resource = UniqueResource("async-pass-on");
    HeldElsewhere holder(resource);
    std::unique_ptr<AsyncWaiter> waiter = MakeWaiter();
    Lock lock = LockOrFail(store, resource);
    Outcome out;
    absl::StatusOr<ipclock::AsyncId> id =
        waiter->Start(lock, LockMode::kExclusive, absl::Seconds(60), Record(&out));
    ASSERT_OK(id);
    usleep(20 * 1000);  // armed before the other waiter queues
    pid_t other = ForkChild([&]() -> int {
      absl::StatusOr<Lock> l = LockInChild(resource);
      if (!l.ok()) return 3;
      return l->Acquire(absl::Seconds(20)).ok() ? 0 : 1;
    });
    usleep(50 * 1000);  // the other process sleeps in the kernel now
    holder.Release();
    assert_int_equal(holder.Wait(), 0);
    usleep(20 * 1000);  // our wait has had the wake
    if (destroy == 1) {
      waiter.reset();  // no callback runs
      assert_int_equal(out.calls, 0);
    } else {
      ASSERT_OK(waiter->Cancel(*id));
      assert_true(RunUntilCalled(*waiter, out, 30));
      ASSERT_CODE(out.status, absl::StatusCode::kCancelled);
    }
    assert_false(lock.is_acquired());
    const double t0 = NowSeconds();
    assert_int_equal(WaitChild(other), 0);
    if (NowSeconds() - t0 > 10) fail_msg("the other waiter was not woken");
  }
}

// A pi=true shm store has no word an outside sleeper could use, and its
// locks belong to a thread: Start() refuses rather than block a helper.
void PriorityInheritanceShmIsRefused(void**) {
  SKIP_WITHOUT_BACKEND();
  if (g_dsn.rfind("shm", 0) != 0) {
    print_message("skipped: shm stores only\n");
    skip();
  }
  absl::StatusOr<std::shared_ptr<Store>> store =
      ipclock::StoreFromDsn(ExpandDsn("shm://{shm}?pi=true"));
  ASSERT_OK(store);
  std::unique_ptr<AsyncWaiter> waiter = MakeWaiter();
  Lock lock = LockOrFail(*store, UniqueResource("async-pi"));
  ASSERT_CODE(waiter->Start(lock, LockMode::kExclusive, absl::Seconds(1), nullptr),
              absl::StatusCode::kFailedPrecondition);
  assert_int_equal(waiter->pending(), 0);
}

// A holder that is not ipclock (a raw flock(2), as util-linux flock(1) does)
// wakes an async waiter by closing its file: the kernel wakes flock waiters
// whoever the holder is.
void ForeignFlockHolderWakesWaiter(void**) {
  SKIP_WITHOUT_BACKEND();
  if (g_dsn.rfind("flock", 0) != 0) {
    print_message("skipped: flock stores only\n");
    skip();
  }
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/foreign.lock";
  absl::StatusOr<std::shared_ptr<Store>> store =
      ipclock::StoreFromDsn(absl::StrCat("flock://", dir, "?naming=path"));
  ASSERT_OK(store);
  Signal held, release;
  pid_t holder = ForkChild([&]() -> int {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) return 2;
    held.Notify();
    if (release.Wait(60) == 0) return 5;
    close(fd);
    return 0;
  });
  assert_int_equal(held.Wait(), 'x');
  std::unique_ptr<AsyncWaiter> waiter = MakeWaiter();
  Lock lock = LockOrFail(*store, path);
  Outcome out;
  ASSERT_OK(waiter->Start(lock, LockMode::kExclusive, absl::Seconds(60), Record(&out)));
  assert_false(RunUntilCalled(*waiter, out, 0.3));
  release.Notify();
  assert_true(RunUntilCalled(*waiter, out, 30));
  ASSERT_OK(out.status);
  assert_true(lock.is_acquired());
  assert_int_equal(WaitChild(holder), 0);
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using ipclock::AsyncWaiterOptions;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ipclock_test::CompletesWhenAnotherProcessReleases),
      cmocka_unit_test(ipclock_test::FreeLockCompletesFromProcessReady),
      cmocka_unit_test(ipclock_test::DeadlineExpiresOnTime),
      cmocka_unit_test(ipclock_test::CancelLeavesNothingHeld),
      cmocka_unit_test(ipclock_test::CancelRacingReleaseLeavesNothingHeld),
      cmocka_unit_test(ipclock_test::ThousandWaitsOnOneThread),
      cmocka_unit_test(ipclock_test::AbandonedWakeIsPassedOn),
      cmocka_unit_test(ipclock_test::PriorityInheritanceShmIsRefused),
      cmocka_unit_test(ipclock_test::ForeignFlockHolderWakesWaiter),
  };
  struct Variant {
    const char* dsn;
    AsyncWaiterOptions::Backend backend;
    const char* name;
  };
  const Variant variants[] = {
      {"shm://{shm}", AsyncWaiterOptions::Backend::kIoUring, "shm, io_uring"},
      {"shm://{shm}", AsyncWaiterOptions::Backend::kThreads, "shm, helper threads"},
      {"flock://{tmpdir}", AsyncWaiterOptions::Backend::kIoUring, "flock, io_uring"},
      {"flock://{tmpdir}", AsyncWaiterOptions::Backend::kThreads, "flock, helper threads"},
  };
  int failures = 0;
  for (const Variant& v : variants) {
    ipclock_test::g_dsn = ipclock_test::ExpandDsn(v.dsn);
    ipclock_test::g_backend = v.backend;
    failures += _cmocka_run_group_tests(v.name, tests, sizeof(tests) / sizeof(tests[0]),
                                        nullptr, nullptr);
  }
  return failures;
}
