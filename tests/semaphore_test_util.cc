// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "semaphore_test_util.h"

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store_factory.h"
#include "platform/proc_pid.h"

namespace ipclock_test {

using ipclock::Lock;
using ipclock::Store;

Lock MakeLock(const std::shared_ptr<Store>& store, const std::string& resource,
              uint32_t permits) {
  ipclock::LockOptions options;
  options.permits = permits;
  return LockOrFail(store, resource, options);
}

void AssertMessageHas(const absl::Status& s, absl::string_view needle) {
  if (s.message().find(needle) == absl::string_view::npos) {
    fail_msg("expected \"%s\" in: %s", std::string(needle).c_str(), s.ToString().c_str());
  }
}

void ExpectBadDsns(absl::string_view scheme, std::initializer_list<const char*> tails) {
  for (const char* tail : tails) {
    ASSERT_CODE(ipclock::StoreFromDsn(absl::StrCat(scheme, tail)),
                absl::StatusCode::kInvalidArgument);
  }
}

pid_t WaitInChild(const std::shared_ptr<Store>& store, const std::string& resource,
                  Signal* waiting, DeathReport* report) {
  return ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    waiting->Notify();
    absl::Status s = lock.Acquire(absl::Seconds(20));
    report->acquired_at_ns = ipclock::Deadline::NowNanos();
    report->acquired = s.ok() ? 1 : 0;
    report->died = lock.previous_owner_died() ? 1 : 0;
    return lock.Release().ok() ? 0 : 3;
  });
}

OtherTry TryInAnotherProcess(const std::shared_ptr<Store>& store, const std::string& resource) {
  const pid_t other = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    absl::StatusOr<bool> got = lock.TryAcquire();
    if (!got.ok()) return 2;
    return *got ? 0 : 1;
  });
  switch (WaitChild(other)) {
    case 0:
      return OtherTry::kGot;
    case 1:
      return OtherTry::kBusy;
    default:
      return OtherTry::kError;
  }
}

double KilledHolderReachesWaiter(const std::shared_ptr<Store>& store, const std::string& resource) {
  auto* report = SharedMemory<DeathReport>();
  Signal locked, waiting;
  const pid_t holder = HoldInChild(store, resource, &locked);
  assert_int_equal(locked.Wait(), 'x');
  const pid_t waiter = WaitInChild(store, resource, &waiting, report);
  assert_int_equal(waiting.Wait(), 'x');
  usleep(300 * 1000);  // the waiter asleep in the kernel
  const int64_t killed_at = ipclock::Deadline::NowNanos();
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(waiter, 30), 0);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
  assert_int_equal(report->acquired.load(), 1);
  assert_int_equal(report->died.load(), 1);
  Lock next = HeldOrFail(store, resource);
  assert_false(next.previous_owner_died());
  return static_cast<double>(report->acquired_at_ns.load() - killed_at) / 1e9;
}

void UseWhileAttacked(const std::function<int(const std::function<bool()>& going_on)>& attack,
                      const std::function<int()>& use) {
  auto* stop = SharedMemory<std::atomic<int>>();
  const pid_t attacker = ForkChild([&] {
    const double until = NowSeconds() + 20.0;
    return attack([&] { return stop->load() == 0 && NowSeconds() < until; });
  });
  std::vector<pid_t> users;
  for (int u = 0; u < 3; ++u) {
    users.push_back(ForkChild([&] {
      const double until = NowSeconds() + 2.0;
      while (NowSeconds() < until) {
        const int code = use();
        if (code != 0) return code;
      }
      return 0;
    }));
  }
  std::vector<int> codes;
  for (pid_t u : users) codes.push_back(WaitChild(u, 60));
  stop->store(1);
  assert_int_equal(WaitChild(attacker), 0);
  for (int code : codes) assert_int_equal(code, 0);
}

int TryCheckRelease(const std::string& dsn, const std::string& resource, uint32_t permits,
                    int tries, absl::Duration wait, const std::function<void()>& after_try) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) return 2;
  ipclock::LockOptions options;
  options.permits = permits;
  absl::StatusOr<Lock> lock = Lock::Create(*store, resource, options);
  if (!lock.ok()) return 3;
  for (int i = 0; i < tries; ++i) {
    absl::StatusOr<bool> got = lock->TryAcquireFor(wait);
    if (got.ok() && *got) {
      lock->CheckAcquired().IgnoreError();
      lock->Release().IgnoreError();
    }
    if (after_try) after_try();
  }
  return 0;
}

namespace {

const SemaphoreSuite& SuiteOf(void** state) {
  return *static_cast<const SemaphoreSuite*>(*state);
}

}  // namespace

void CountingPermitsAcrossProcesses(void** state) {
  const std::shared_ptr<Store> store = OpenStoreOrFail(SuiteOf(state).dsn);
  struct Counter {
    std::atomic<int> inside{0};
    std::atomic<int> max_inside{0};
  };
  const std::string resource = UniqueResource("permits");
  auto* c = SharedMemory<Counter>();
  constexpr int kPermits = 3, kProcs = 6, kRounds = 20;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    kids.push_back(ForkChild([&] {
      Lock lock = MakeLock(store, resource, kPermits);
      for (int i = 0; i < kRounds; ++i) {
        if (!lock.Acquire(absl::Seconds(30)).ok()) return 2;
        int now = c->inside.fetch_add(1) + 1;
        int seen = c->max_inside.load();
        while (now > seen && !c->max_inside.compare_exchange_weak(seen, now)) {
        }
        usleep(2000);
        c->inside.fetch_sub(1);
        if (!lock.Release().ok()) return 3;
      }
      return 0;
    }));
  }
  for (pid_t k : kids) assert_int_equal(WaitChild(k, 120), 0);
  assert_true(c->max_inside.load() <= kPermits);
  assert_true(c->max_inside.load() >= 2);

  const std::string two = UniqueResource("permits-kill");
  Signal locked;
  pid_t holder = ForkChild([&] {
    Lock lock = MakeLock(store, two, 2);
    if (!lock.TryAcquire().value_or(false)) return 2;
    locked.Notify();
    for (;;) pause();
  });
  assert_int_equal(locked.Wait(), 'x');
  Lock mine = MakeLock(store, two, 2);
  assert_true(TryOrFail(mine));
  assert_false(mine.previous_owner_died());
  KillChild(holder);
  Lock second = MakeLock(store, two, 2);
  assert_true(TryOrFail(second));
  assert_true(second.previous_owner_died());
  Lock third = MakeLock(store, two, 2);
  assert_false(TryOrFail(third));  // never a third permit
}

void PermitsMismatchIsRefused(void** state) {
  const std::shared_ptr<Store> store = OpenStoreOrFail(SuiteOf(state).dsn);
  const std::string resource = UniqueResource("mismatch");
  Lock three = MakeLock(store, resource, 3);
  assert_true(TryOrFail(three));
  Lock two = MakeLock(store, resource, 2);
  absl::StatusOr<bool> got = two.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
  AssertMessageHas(got.status(), "permits=2");
  AssertMessageHas(got.status(), "permits=3");
  ASSERT_OK(three.Release());
  Drop(three);
  // Nobody uses the resource but the store's idle attachment, made for 3:
  // that binds nobody, as objects already removed would not (keep_idle=0);
  // a Lock asking 2 gets objects of its own.
  TakeAndRelease(two);
}

void FullCyclesUnderKills(void** state) {
  const SemaphoreSuite& suite = SuiteOf(state);
  const std::string dsn = suite.dsn;
  const std::string resource = UniqueResource("cycles-kill");
  constexpr double seconds = 3.0;
  struct Shared {
    std::atomic<int> overlaps{0};
    std::atomic<int> errors{0};
    std::atomic<int> unreported{0};
    std::atomic<long> cycles{0};
    // The holder, set on entry and cleared before release: a holder that
    // finds it set took over from one killed inside, which must be gone.
    std::atomic<pid_t> owner{0};
  };
  auto* sh = SharedMemory<Shared>();
  auto worker = [&] {
    return ForkChild([&] {
      absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
      if (!store.ok()) return 2;
      for (;;) {
        absl::StatusOr<Lock> lock = Lock::Create(*store, resource);
        if (!lock.ok()) return 3;
        absl::Status s = lock->Acquire(absl::Seconds(10));
        if (!s.ok()) {
          sh->errors++;
          fprintf(stderr, "worker %d: %s\n", getpid(), s.ToString().c_str());
          continue;
        }
        const pid_t before = sh->owner.exchange(getpid());
        if (before != 0) {
          // The kernel frees a killed holder's lock while it exits, which
          // ProcessIsGone() counts as gone.
          if (!ipclock::ProcessIsGone(before, 0)) {
            sh->overlaps++;
          } else if (!lock->previous_owner_died()) {
            sh->unreported++;
          }
        }
        sched_yield();
        if (sh->owner.exchange(0) != getpid()) sh->overlaps++;
        if (!lock->Release().ok()) sh->errors++;
        sh->cycles++;
      }
    });
  };
  std::vector<pid_t> workers;
  for (int i = 0; i < 4; ++i) workers.push_back(worker());
  unsigned seed = static_cast<unsigned>(getpid());
  int kills = 0;
  const double until = NowSeconds() + seconds;
  while (NowSeconds() < until) {
    usleep(20 * 1000);
    const size_t victim = rand_r(&seed) % workers.size();
    kill(workers[victim], SIGKILL);
    WaitChild(workers[victim]);
    ++kills;
    workers[victim] = worker();
  }
  for (pid_t w : workers) {
    kill(w, SIGKILL);
    WaitChild(w);
  }
  print_message("%s: %ld full cycles, %d kills\n", dsn.c_str(), sh->cycles.load(), kills);
  assert_int_equal(sh->overlaps.load(), 0);
  assert_int_equal(sh->errors.load(), 0);
  assert_int_equal(sh->unreported.load(), 0);
  assert_true(sh->cycles.load() > 0);
  // The killed workers' attachments are reclaimed by the next user; the
  // last one to leave removes what is left.
  {
    std::shared_ptr<Store> last = OpenStoreOrFail(suite.keep_nothing_dsn);
    Lock lock = MakeLock(last, resource);
    ASSERT_OK(lock.Acquire(absl::Seconds(10)));
    ASSERT_OK(lock.Release());
  }
  assert_false(suite.objects_left(resource));
}

void CheckWatchReportsLoss(Lock lock, absl::Duration interval,
                           const std::function<void()>& lose, absl::string_view needle) {
  ipclock::WatchOptions options;
  options.check_interval = interval;
  std::atomic<int> losses{0};
  options.diagnostics = [&](const ipclock::Diagnostic&) { losses++; };
  ipclock::LockWatch watch;
  absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(lock), options);
  ASSERT_OK(watched);
  usleep(200 * 1000);
  assert_false(watched->lost());  // nothing lost: no false alarm
  lose();
  // lost() turns true before the report, which runs on a thread of its own.
  for (int i = 0; i < 200 && (!watched->lost() || losses.load() == 0); ++i) usleep(50 * 1000);
  assert_true(watched->lost());
  usleep(100 * 1000);  // room for a second report, which must not come
  assert_int_equal(losses.load(), 1);
  ASSERT_CODE(watched->status(), absl::StatusCode::kAborted);
  AssertMessageHas(watched->status(), needle);
  ASSERT_CODE(watched->Release(), absl::StatusCode::kAborted);
}

void KeepIdleIsBounded(void** state) {
  const SemaphoreSuite& suite = SuiteOf(state);
  OpenStoreOrFail(absl::StrCat(suite.dsn, ":?keep_idle=4096"));
  ExpectBadDsns(suite.dsn, {":?keep_idle=-1", ":?keep_idle=4097", ":?keep_idle=lots",
                            ":?keep_idle="});
  ASSERT_OK(suite.make_with_keep_idle(4096));
  ASSERT_CODE(suite.make_with_keep_idle(4097), absl::StatusCode::kInvalidArgument);
}

void IdleObjectsAreBoundedByKeepIdle(void** state) {
  const SemaphoreSuite& suite = SuiteOf(state);
  std::shared_ptr<Store> two = OpenStoreOrFail(absl::StrCat(suite.dsn, ":?keep_idle=2"));
  const std::string r[3] = {UniqueResource("lru"), UniqueResource("lru"), UniqueResource("lru")};
  for (const std::string& name : r) {
    Lock lock = HeldOrFail(two, name);
  }
  assert_false(suite.objects_left(r[0]));
  assert_true(suite.objects_left(r[1]) && suite.objects_left(r[2]));
  two.reset();
  assert_false(suite.objects_left(r[1]) || suite.objects_left(r[2]));
}

void ForkedChildCannotReleaseParentsLock(void** state) {
  const SemaphoreSuite& suite = SuiteOf(state);
  std::shared_ptr<Store> store = OpenStoreOrFail(suite.keep_nothing_dsn);
  const std::string resource = UniqueResource("fork-held");
  Lock lock = HeldOrFail(store, resource);
  const pid_t child = ForkChild([&] {
    if (!absl::IsFailedPrecondition(lock.Release())) return 2;
    Lock copy = std::move(lock);
    return 0;
  });
  assert_int_equal(WaitChild(child), 0);
  assert_true(TryInAnotherProcess(store, resource) == OtherTry::kBusy);
  assert_true(IsStillHeld(lock));
  ASSERT_OK(lock.Release());
  Drop(lock);
  assert_false(suite.objects_left(resource));
}

int RunWithSharedTests(const CMUnitTest* own, size_t count, SemaphoreSuite* suite) {
  std::vector<CMUnitTest> tests(own, own + count);
  const CMUnitTest shared[] = {
      cmocka_unit_test_prestate(KeepIdleIsBounded, suite),
      cmocka_unit_test_prestate(IdleObjectsAreBoundedByKeepIdle, suite),
      cmocka_unit_test_prestate(ForkedChildCannotReleaseParentsLock, suite),
      cmocka_unit_test_prestate(CountingPermitsAcrossProcesses, suite),
      cmocka_unit_test_prestate(PermitsMismatchIsRefused, suite),
      cmocka_unit_test_prestate(FullCyclesUnderKills, suite),
  };
  tests.insert(tests.end(), std::begin(shared), std::end(shared));
  // The group's name is what cmocka_run_group_tests(tests, ...) gives.
  return _cmocka_run_group_tests("tests", tests.data(), tests.size(), nullptr, nullptr);
}

}  // namespace ipclock_test
