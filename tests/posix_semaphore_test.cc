// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The POSIX semaphore store: names, DSN options, a dead holder's permit
// coming back within the documented bound (with previous_owner_died), a live
// or stopped holder never reclaimed, a stolen wake-up taking no permit,
// exclusion and counting between
// processes, nothing left in /dev/shm, and timed waits.

#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/posix_semaphore_store.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::LockOptions;
using ipclock::Store;
using namespace ipclock_test;

// The documented bound on a dead holder's permit coming back to a waiter,
// plus generous slack for a loaded machine.
constexpr double kReclaimBound = 0.2;
constexpr double kSlack = 2.0;

std::shared_ptr<Store> OpenStore(const std::string& dsn = "posix-semaphore") {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) {
    fail_msg("StoreFromDsn(%s): %s", dsn.c_str(), store.status().ToString().c_str());
  }
  return *store;
}

Lock MakeLock(const std::shared_ptr<Store>& store, const std::string& resource,
              uint32_t permits = 1) {
  LockOptions options;
  options.permits = permits;
  absl::StatusOr<Lock> lock = Lock::Create(store, resource, options);
  if (!lock.ok()) fail_msg("Lock::Create: %s", lock.status().ToString().c_str());
  return *std::move(lock);
}

bool Try(Lock& lock) {
  absl::StatusOr<bool> got = lock.TryAcquire();
  if (!got.ok()) fail_msg("TryAcquire: %s", got.status().ToString().c_str());
  return *got;
}

// Whether the semaphore or the registry of `resource` is in /dev/shm.
bool ObjectsExist(const std::string& resource, absl::string_view prefix = "ipclock") {
  const std::string name = ipclock::PosixSemaphoreName(resource, prefix);
  struct stat st;
  return stat(absl::StrCat("/dev/shm/sem.", name.substr(1)).c_str(), &st) == 0 ||
         stat(absl::StrCat("/dev/shm", name, ".reg").c_str(), &st) == 0;
}

// Destroys the Locks: a released Lock keeps its registry slot, and so the
// semaphore and the registry, until then.
template <typename... Locks>
void Drop(Locks&... locks) {
  (Lock(std::move(locks)), ...);
}

void AssertMessageHas(const absl::Status& s, absl::string_view needle) {
  if (s.message().find(needle) == absl::string_view::npos) {
    fail_msg("expected \"%s\" in: %s", std::string(needle).c_str(), s.ToString().c_str());
  }
}

void Names(void**) {
  assert_string_equal(ipclock::PosixSemaphoreName("invoice-42").c_str(),
                      "/ipclock.3c304bc21c84147600a54c27b7bccab9");
  assert_string_equal(ipclock::PosixSemaphoreName("invoice-42", "app").c_str(),
                      "/app.3c304bc21c84147600a54c27b7bccab9");
  // Any bytes in a resource still give a valid name (no '/').
  std::string odd("a/b\0c", 5);
  assert_int_equal(ipclock::PosixSemaphoreName(odd).find('/', 1), std::string::npos);
}

void DsnOptions(void**) {
  std::shared_ptr<Store> store = OpenStore();
  assert_string_equal(std::string(store->name()).c_str(), "posix-semaphore");
  ipclock::Capabilities c = store->capabilities();
  assert_true(c.blocking && c.counting && c.owner_death);
  assert_false(c.shared || c.expiring || c.serializable || c.fencing);
  OpenStore("posix-semaphore:?prefix=my_app-1.x&mode=0666");
  ASSERT_CODE(ipclock::StoreFromDsn("posix-semaphore:?prefix=a/b"),
              absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("posix-semaphore:?prefix="),
              absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("posix-semaphore:?key_scheme=md5"),
              absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("posix-semaphore://x"), absl::StatusCode::kInvalidArgument);
}

void NothingLeftBehind(void**) {
  std::shared_ptr<Store> store = OpenStore("posix-semaphore:?prefix=ipclock-left");
  const std::string resource = UniqueResource("left");
  Lock a = MakeLock(store, resource);
  Lock b = MakeLock(store, resource);
  assert_true(Try(a));
  assert_true(ObjectsExist(resource, "ipclock-left"));
  assert_false(Try(b));
  assert_false(ipclock::internal::LockAccess::key(b).serializable() && ipclock::internal::LockAccess::key(a).serializable());
  ASSERT_OK(a.Release());
  assert_true(ObjectsExist(resource, "ipclock-left"));  // a and b still exist
  Drop(a);
  assert_true(Try(b));
  ASSERT_OK(b.Release());
  assert_true(ObjectsExist(resource, "ipclock-left"));
  Drop(b);
  assert_false(ObjectsExist(resource, "ipclock-left"));
}

struct DeathReport {
  std::atomic<int> acquired{-1};
  std::atomic<int> died{-1};
  std::atomic<int64_t> acquired_at_ns{0};
};

// A reused Lock keeps its slot and the open semaphore: both files stay
// (same inodes: nothing was removed and made again) while the Lock lives,
// and go once it is destroyed.
void ReusedLockKeepsItsObjects(void**) {
  std::shared_ptr<Store> store = OpenStore("posix-semaphore:?prefix=ipclock-reuse");
  const std::string resource = UniqueResource("reuse");
  const std::string name = ipclock::PosixSemaphoreName(resource, "ipclock-reuse");
  const std::string sem_path = absl::StrCat("/dev/shm/sem.", name.substr(1));
  const std::string reg_path = absl::StrCat("/dev/shm", name, ".reg");
  {
    Lock lock = MakeLock(store, resource);
    assert_true(Try(lock));
    struct stat sem_before, reg_before;
    assert_int_equal(stat(sem_path.c_str(), &sem_before), 0);
    assert_int_equal(stat(reg_path.c_str(), &reg_before), 0);
    ASSERT_OK(lock.Release());
    for (int i = 0; i < 100; ++i) {
      assert_true(Try(lock));
      ASSERT_OK(lock.Release());
      struct stat sem_now, reg_now;
      assert_int_equal(stat(sem_path.c_str(), &sem_now), 0);
      assert_int_equal(stat(reg_path.c_str(), &reg_now), 0);
      assert_int_equal(sem_now.st_ino, sem_before.st_ino);
      assert_int_equal(reg_now.st_ino, reg_before.st_ino);
    }
    // A fork()ed child that destroys its copy of the Lock must leave the
    // parent's slot, and so the pair, alone.
    pid_t child = ForkChild([&] {
      Lock copy = std::move(lock);
      return 0;
    });
    assert_int_equal(WaitChild(child), 0);
    assert_true(ObjectsExist(resource, "ipclock-reuse"));
    assert_true(Try(lock));
    ASSERT_OK(lock.Release());
    struct stat reg_now;
    assert_int_equal(stat(reg_path.c_str(), &reg_now), 0);
    assert_int_equal(reg_now.st_ino, reg_before.st_ino);
  }
  assert_false(ObjectsExist(resource, "ipclock-reuse"));
}

void KilledHolderPermitComesBack(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("kill");
  auto* report = SharedMemory<DeathReport>();
  Signal locked, waiting;
  pid_t holder = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    if (!lock.TryAcquire().value_or(false)) return 2;
    locked.Notify();
    for (;;) pause();
  });
  assert_int_equal(locked.Wait(), 'x');
  pid_t waiter = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    waiting.Notify();
    absl::Status s = lock.Acquire(absl::Seconds(20));
    report->acquired_at_ns = ipclock::Deadline::NowNanos();
    report->acquired = s.ok() ? 1 : 0;
    report->died = lock.previous_owner_died() ? 1 : 0;
    return lock.Release().ok() ? 0 : 3;
  });
  assert_int_equal(waiting.Wait(), 'x');
  usleep(300 * 1000);
  const int64_t killed_at = ipclock::Deadline::NowNanos();
  // The holder stays a zombie until we reap it below: the registry must see
  // through that too.
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(waiter, 30), 0);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
  assert_int_equal(report->acquired.load(), 1);
  assert_int_equal(report->died.load(), 1);
  const double back = static_cast<double>(report->acquired_at_ns.load() - killed_at) / 1e9;
  print_message("permit back %.3f s after kill -9 (bound %.1f s)\n", back, kReclaimBound);
  if (back > kReclaimBound + kSlack) fail_msg("permit came back only after %.3f s", back);

  // The waiter released cleanly: no death reported to the next holder.
  Lock next = MakeLock(store, resource);
  assert_true(Try(next));
  assert_false(next.previous_owner_died());
  ASSERT_OK(next.Release());
  Drop(next);
  assert_false(ObjectsExist(resource));

  // Nobody waiting: a try after the death reclaims at once.
  holder = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    if (!lock.TryAcquire().value_or(false)) return 2;
    locked.Notify();
    for (;;) pause();
  });
  assert_int_equal(locked.Wait(), 'x');
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
  Lock after = MakeLock(store, resource);
  assert_true(Try(after));
  assert_true(after.previous_owner_died());
  ASSERT_OK(after.Release());
  Drop(after);
  assert_false(ObjectsExist(resource));
}

// A live holder is never reclaimed, even one that is stopped (SIGSTOP) and
// makes no progress at all.
// A process that takes a post from the semaphore and dies before it marks
// a registry slot (a waiter killed just after its wake-up, or a program
// that sem_waits on the semaphore) takes no permit with it: the registry
// alone counts them. A waiter whose wake-up is lost so finds the permit
// within its slice.
void StolenPostTakesNoPermit(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("stolen-post");
  const std::string name = ipclock::PosixSemaphoreName(resource);
  Lock keeper = MakeLock(store, resource);  // keeps the pair in /dev/shm
  assert_true(Try(keeper));
  ASSERT_OK(keeper.Release());
  pid_t thief = ForkChild([&] {
    sem_t* sem = sem_open(name.c_str(), 0);
    if (sem == SEM_FAILED) return 2;
    if (sem_trywait(sem) != 0) return 3;
    _exit(0);  // dies with the post, as if killed
  });
  assert_int_equal(WaitChild(thief), 0);
  Lock a = MakeLock(store, resource);
  assert_true(Try(a));
  assert_false(a.previous_owner_died());
  Lock b = MakeLock(store, resource);
  assert_false(Try(b));

  // Now the release's post is stolen from under a waiter.
  Signal waiting;
  auto* report = SharedMemory<DeathReport>();
  pid_t waiter = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    waiting.Notify();
    absl::Status s = lock.Acquire(absl::Seconds(20));
    report->acquired_at_ns = ipclock::Deadline::NowNanos();
    report->acquired = s.ok() ? 1 : 0;
    return lock.Release().ok() ? 0 : 3;
  });
  assert_int_equal(waiting.Wait(), 'x');
  usleep(100 * 1000);
  sem_t* sem = sem_open(name.c_str(), 0);
  assert_true(sem != SEM_FAILED);
  ASSERT_OK(a.Release());
  const int64_t released_at = ipclock::Deadline::NowNanos();
  sem_trywait(sem);  // may lose the race to the waiter: then nothing to see
  sem_close(sem);
  assert_int_equal(WaitChild(waiter, 30), 0);
  assert_int_equal(report->acquired.load(), 1);
  const double back = static_cast<double>(report->acquired_at_ns.load() - released_at) / 1e9;
  if (back > kReclaimBound + kSlack) fail_msg("waiter woke only after %.3f s", back);
  Drop(a, b, keeper);
  assert_false(ObjectsExist(resource));
}

void LiveHolderIsNeverReclaimed(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("live");
  Signal locked;
  pid_t holder = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    if (!lock.TryAcquire().value_or(false)) return 2;
    locked.Notify();
    for (;;) pause();
  });
  assert_int_equal(locked.Wait(), 'x');
  Lock lock = MakeLock(store, resource);
  ASSERT_CODE(lock.Acquire(absl::Milliseconds(700)), absl::StatusCode::kDeadlineExceeded);
  kill(holder, SIGSTOP);
  ASSERT_CODE(lock.Acquire(absl::Milliseconds(700)), absl::StatusCode::kDeadlineExceeded);
  assert_false(Try(lock));
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
  ASSERT_OK(lock.Acquire(absl::Seconds(5)));
  assert_true(lock.previous_owner_died());
  ASSERT_OK(lock.Release());
  Drop(lock);
  assert_false(ObjectsExist(resource));
}

struct Counter {
  std::atomic<int> inside{0};
  std::atomic<int> max_inside{0};
  std::atomic<int> overlaps{0};
  long value = 0;  // updated only under the lock, without atomics on purpose
};

void NoLostUpdates(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("count");
  auto* c = SharedMemory<Counter>();
  constexpr int kProcs = 4, kRounds = 300;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    kids.push_back(ForkChild([&] {
      Lock lock = MakeLock(store, resource);
      for (int i = 0; i < kRounds; ++i) {
        if (!lock.Acquire(absl::Seconds(30)).ok()) return 2;
        if (c->inside.fetch_add(1) != 0) c->overlaps++;
        long v = c->value;
        if (i % 7 == 0) sched_yield();
        c->value = v + 1;
        c->inside.fetch_sub(1);
        if (!lock.Release().ok()) return 3;
      }
      return 0;
    }));
  }
  for (pid_t k : kids) assert_int_equal(WaitChild(k, 120), 0);
  assert_int_equal(c->overlaps.load(), 0);
  assert_int_equal(c->value, kProcs * kRounds);
  assert_false(ObjectsExist(resource));
}

void CountingPermits(void**) {
  std::shared_ptr<Store> store = OpenStore();
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
  assert_false(ObjectsExist(resource));

  // A holder of a counting lock killed: its permit, and only its, returns.
  Signal locked;
  pid_t holder = ForkChild([&] {
    Lock lock = MakeLock(store, resource, 2);
    if (!lock.TryAcquire().value_or(false)) return 2;
    locked.Notify();
    for (;;) pause();
  });
  assert_int_equal(locked.Wait(), 'x');
  Lock mine = MakeLock(store, resource, 2);
  assert_true(Try(mine));
  assert_false(mine.previous_owner_died());
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
  Lock second = MakeLock(store, resource, 2);
  assert_true(Try(second));
  assert_true(second.previous_owner_died());
  Lock third = MakeLock(store, resource, 2);
  assert_false(Try(third));  // never a third permit
  ASSERT_OK(second.Release());
  ASSERT_OK(mine.Release());
  Drop(second, mine, third);
  assert_false(ObjectsExist(resource));
}

void PermitsMismatchIsRefused(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("mismatch");
  Lock three = MakeLock(store, resource, 3);
  assert_true(Try(three));
  Lock two = MakeLock(store, resource, 2);
  absl::StatusOr<bool> got = two.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
  AssertMessageHas(got.status(), "permits=2");
  AssertMessageHas(got.status(), "permits=3");
  ASSERT_OK(three.Release());
  Drop(three, two);
  assert_false(ObjectsExist(resource));
}

void TimedWaitGivesUpNearDeadline(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("timed");
  Lock holder = MakeLock(store, resource);
  assert_true(Try(holder));
  Lock waiter = MakeLock(store, resource);
  const double start = NowSeconds();
  ASSERT_CODE(waiter.Acquire(absl::Milliseconds(500)), absl::StatusCode::kDeadlineExceeded);
  const double took = NowSeconds() - start;
  if (took < 0.49 || took > 3.0) fail_msg("waited %.3f s for a 0.5 s timeout", took);
  ASSERT_OK(holder.Release());
  Drop(holder, waiter);
  assert_false(ObjectsExist(resource));
}

// A release wakes a waiter at once, not at its next reclaim slice.
void ReleaseWakesWaiter(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("wake");
  Lock holder = MakeLock(store, resource);
  assert_true(Try(holder));
  auto* report = SharedMemory<DeathReport>();
  Signal waiting;
  pid_t waiter = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    waiting.Notify();
    absl::Status s = lock.Acquire(absl::Seconds(20));
    report->acquired_at_ns = ipclock::Deadline::NowNanos();
    report->acquired = s.ok() ? 1 : 0;
    return lock.Release().ok() ? 0 : 3;
  });
  assert_int_equal(waiting.Wait(), 'x');
  usleep(300 * 1000);
  const int64_t released_at = ipclock::Deadline::NowNanos();
  ASSERT_OK(holder.Release());
  assert_int_equal(WaitChild(waiter), 0);
  assert_int_equal(report->acquired.load(), 1);
  const double after = static_cast<double>(report->acquired_at_ns.load() - released_at) / 1e9;
  print_message("waiter woke %.1f ms after release\n", after * 1e3);
  Drop(holder);
  assert_false(ObjectsExist(resource));
}

void AcquireReleaseCost(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("cost");
  Lock lock = MakeLock(store, resource);
  constexpr int kRounds = 5000;
  const double start = NowSeconds();
  for (int i = 0; i < kRounds; ++i) {
    if (!Try(lock)) fail_msg("not acquired");
    ASSERT_OK(lock.Release());
  }
  print_message("acquire+release: %.2f us (the Lock stays attached)\n",
                (NowSeconds() - start) / kRounds * 1e6);
  Drop(lock);
  assert_false(ObjectsExist(resource));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(Names),
      cmocka_unit_test(DsnOptions),
      cmocka_unit_test(NothingLeftBehind),
      cmocka_unit_test(ReusedLockKeepsItsObjects),
      cmocka_unit_test(KilledHolderPermitComesBack),
      cmocka_unit_test(StolenPostTakesNoPermit),
      cmocka_unit_test(LiveHolderIsNeverReclaimed),
      cmocka_unit_test(NoLostUpdates),
      cmocka_unit_test(CountingPermits),
      cmocka_unit_test(PermitsMismatchIsRefused),
      cmocka_unit_test(TimedWaitGivesUpNearDeadline),
      cmocka_unit_test(ReleaseWakesWaiter),
      cmocka_unit_test(AcquireReleaseCost),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
