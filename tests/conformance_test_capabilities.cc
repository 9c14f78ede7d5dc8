// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The conformance suite's tests of killed waiters and holders with waiters,
// the order of fair stores, cancelled waits, fencing, expiring, shared and
// counting stores,
// run by conformance_test.cc's table, on the store under test (g_dsn).

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/lock_factory.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "conformance_test.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

using ipclock::Capabilities;
using ipclock::Lock;
using ipclock::LockMode;
using ipclock::LockOptions;
using ipclock::Scope;
using ipclock::Store;

// The store under test and a resource of the test's own, for a test of
// what a store with a capability does.
struct StoreAndResource {
  std::shared_ptr<Store> store;
  std::string r;
};
// Skips the test on a store without `capability` (one of Caps()).
StoreAndResource OpenOrSkipWithout(bool capability, const char* tag) {
  if (!capability) skip();
  return {OpenStoreOrFail(g_dsn), UniqueResource(tag)};
}

// --- Waiters killed, holders killed with waiters, order ---------------------------

// Tests that kill waiters and count turns need a store on this host whose
// waiters sleep until woken: a server's queue or a poll would need timing
// of its own.
bool LocalBlocking() {
  const Capabilities c = Caps();
  return c.scope == Scope::kLocal && c.blocking;
}

// Forks a process that waits for `r` and, once it holds the lock, exits
// with what `then` returns; comes back once that process sleeps in its
// wait. No timeout: ThreadSanitizer builds wait out a timed lock of a
// robust mutex with trylock (platform/robust_mutex.h), outside the kernel's
// queue whose order these tests check; WaitChild's limit ends a wait that
// would not.
pid_t StartWaiter(const std::shared_ptr<Store>& store, const std::string& r,
                  const std::function<int(Lock&)>& then) {
  Signal started;
  pid_t waiter = ForkChild([&] {
    absl::StatusOr<Lock> lock = Lock::Create(store, r);
    if (!lock.ok()) return 2;
    started.Notify();
    if (!lock->Acquire().ok()) return 3;
    return then(*lock);
  });
  assert_int_equal(started.Wait(), 'x');
  AwaitWaiting(waiter);
  return waiter;
}

int ReleaseIt(Lock& lock) { return lock.Release().ok() ? 0 : 4; }

// A waiter killed while it waits (queued in the kernel, in a store's queue,
// or on its way there) leaves nothing that holds up the waiter behind it.
void KilledWaiterDoesNotBlockTheNext(void**) {
  if (!LocalBlocking()) skip();
  auto store = OpenStoreOrFail(g_dsn);
  std::string r = UniqueResource("deadwaiter");
  Lock holder = HeldOrFail(store, r);
  const pid_t first = StartWaiter(store, r, ReleaseIt);
  const pid_t second = StartWaiter(store, r, ReleaseIt);
  KillChild(first);
  const double released = NowSeconds();
  ASSERT_OK(holder.Release());
  assert_int_equal(WaitChild(second), 0);
  print_message("the waiter behind a killed one got the lock %.3f s after the release\n",
                NowSeconds() - released);
  Lock after = HeldOrFail(store, r);
}

// A holder killed while another process waits: the waiter gets the lock
// and, where the store reports owner death, is told.
void KilledHolderWithAWaiterIsReported(void**) {
  if (!LocalBlocking()) skip();
  auto store = OpenStoreOrFail(g_dsn);
  std::string r = UniqueResource("deadholder");
  struct Shared {
    std::atomic<int> died{-1};
  };
  Shared* shared = SharedMemory<Shared>();
  Signal locked;
  pid_t holder = HoldInChild(store, r, &locked);
  assert_int_equal(locked.Wait(), 'x');
  const pid_t waiter = StartWaiter(store, r, [&](Lock& lock) {
    shared->died = lock.previous_owner_died() ? 1 : 0;
    return 0;
  });
  KillChild(holder);
  assert_int_equal(WaitChild(waiter), 0);
  if (store->capabilities().owner_death) assert_int_equal(shared->died.load(), 1);
}

// A fair store serves waiters in order: a holder that releases and
// acquires again at once queues behind the process that was waiting, which
// gets the lock first. (A store without `fair` usually lets the releaser
// take it back before the waiter wakes.)
void FairStoreServesTheWaiterFirst(void**) {
  if (!LocalBlocking() || !Caps().fair) skip();
  auto store = OpenStoreOrFail(g_dsn);
  std::string r = UniqueResource("order");
  struct Shared {
    std::atomic<int> round{0};
    std::atomic<int> got_in_round{0};
  };
  Shared* shared = SharedMemory<Shared>();
  Lock holder = HeldOrFail(store, r);
  const pid_t waiter = StartWaiter(store, r, [&](Lock& lock) {
    shared->got_in_round = shared->round.load();
    return ReleaseIt(lock);
  });
  for (int round = 1; round <= 10 && shared->got_in_round.load() == 0; ++round) {
    shared->round = round;
    ASSERT_OK(holder.Release());
    ASSERT_OK(holder.Acquire(absl::Seconds(30)));
  }
  ASSERT_OK(holder.Release());
  assert_int_equal(WaitChild(waiter), 0);
  print_message("the waiter got the lock at the holder's release number %d\n",
                shared->got_in_round.load());
  assert_int_equal(shared->got_in_round.load(), 1);
}

// On a fair store with shared locks, a reader that comes while a writer
// waits queues behind the writer instead of joining the readers who hold
// the lock: a stream of readers cannot starve a writer.
void FairStoreLetsNoReaderPastAWaitingWriter(void**) {
  if (!LocalBlocking() || !Caps().fair || !Caps().shared) skip();
  auto store = OpenStoreOrFail(g_dsn);
  std::string r = UniqueResource("writer");
  Lock reader = HeldSharedOrFail(store, r);
  const pid_t writer = StartWaiter(store, r, ReleaseIt);
  Lock late_reader = LockOrFail(store, r);
  assert_false(TryOrFail(late_reader, LockMode::kShared));
  ASSERT_OK(reader.Release());
  assert_int_equal(WaitChild(writer), 0);
  assert_true(TryOrFail(late_reader, LockMode::kShared));
}

// --- Cancelled waits ----------------------------------------------------------------

// A Canceller ends a wait from another thread: Cancelled, without the
// lock, and out of the store's queue (on etcd and ZooKeeper this process's
// lease and session live on, so a key or node left behind would keep the
// next waiter out for good). Every later wait of its Locks ends at once; a
// try still tries. How soon: at once on `cancellable` stores, within a
// 200 ms slice elsewhere; the bound here only catches a wait that went on.
void CancelledWaitLeavesTheQueue(void**) {
  auto store = OpenStoreOrFail(g_dsn);
  const std::string r = UniqueResource("cancel");
  Lock holder = HeldOrFail(store, r);
  absl::StatusOr<std::shared_ptr<ipclock::Canceller>> canceller = ipclock::Canceller::Create();
  ASSERT_OK(canceller);
  LockOptions options;
  options.canceller = *canceller;
  Lock waiter = LockOrFail(store, r, options);
  absl::Status waited;
  std::atomic<double> ended{0};
  std::thread wait([&] {
    waited = waiter.Acquire(absl::Seconds(60));
    ended = NowSeconds();
  });
  // Into its wait, most likely (a cancel before it began ends it alike).
  absl::SleepFor(absl::Milliseconds(300));
  const double t0 = NowSeconds();
  (*canceller)->Cancel();
  wait.join();
  print_message("the wait ended %.1f ms after Cancel() (%s)\n", (ended - t0) * 1e3,
                Caps().cancellable ? "cancellable" : "200 ms slices");
  ASSERT_CODE(waited, absl::StatusCode::kCancelled);
  assert_false(waiter.is_acquired());
  assert_true(ended - t0 < 10);
  ASSERT_CODE(waiter.TryAcquireFor(absl::Seconds(30)).status(), absl::StatusCode::kCancelled);
  assert_false(TryOrFail(waiter));
  ASSERT_OK(holder.Release());
  Lock next = LockOrFail(store, r);
  ASSERT_OK(next.Acquire(absl::Seconds(20)));
}

// --- Fencing -----------------------------------------------------------------

void FenceGrows(void**) {
  if (!Caps().fencing) skip();
  auto store = OpenStoreOrFail(g_dsn);
  std::string r = UniqueResource("fence");
  Lock lock = HeldOrFail(store, r);
  assert_true(lock.fence().has_value());
  uint64_t first = *lock.fence();
  ASSERT_OK(lock.Release());
  Lock other = HeldOrFail(store, r);
  assert_true(*other.fence() > first);
  uint64_t second = *other.fence();
  ASSERT_OK(other.Release());
  if (!CrossProcess()) return;
  struct Shared {
    std::atomic<uint64_t> fence{0};
  };
  Shared* shared = SharedMemory<Shared>();
  pid_t child = ForkChild([&] {
    absl::StatusOr<Lock> l = Lock::Create(store, r);
    if (!l.ok() || !l->TryAcquire().value_or(false) || !l->fence()) return 2;
    shared->fence = *l->fence();
    return 0;
  });
  assert_int_equal(WaitChild(child), 0);
  assert_true(shared->fence.load() > second);
}

// --- Expiring stores -------------------------------------------------------------

void ExpiresAfterTtl(void**) {
  auto [store, r] = OpenOrSkipWithout(Caps().expiring, "ttl");
  LockOptions options;
  options.ttl = absl::Milliseconds(400);
  Lock lock = HeldOrFail(store, r, options);
  absl::Duration left = lock.RemainingLifetime();
  assert_true(left > absl::ZeroDuration() && left <= absl::Milliseconds(400));
  ASSERT_OK(lock.Refresh(absl::Milliseconds(400)));
  assert_true(Held(lock));
  assert_false(lock.IsExpired());
  absl::SleepFor(absl::Milliseconds(700));
  assert_true(lock.IsExpired());
  assert_false(Held(lock));
  // Stores whose server keeps leases in whole seconds (the SQL table
  // stores: the lease rounded up, plus one) free the lock up to two seconds
  // after the holder's own count ended; a wait covers them.
  Lock other = LockOrFail(store, r);
  ASSERT_OK(other.Acquire(absl::Seconds(5)));
}

void NearZeroRefreshReportsExpiry(void**) {
  if (!Caps().expiring) skip();
  auto store = OpenStoreOrFail(g_dsn);
  Lock lock = HeldOrFail(store, UniqueResource("zero"));
  absl::Status s = lock.Refresh(absl::Nanoseconds(1));
  assert_true(lock.IsExpired());
  ASSERT_CODE(s, absl::StatusCode::kAborted);
}

void SavingExpiredKeyLeavesNothing(void**) {
  auto [store, r] = OpenOrSkipWithout(Caps().expiring, "expired");
  LockOptions options;
  options.ttl = absl::Nanoseconds(1);
  Lock lock = LockOrFail(store, r, options);
  ASSERT_CODE(lock.TryAcquire(), absl::StatusCode::kAborted);
  assert_false(lock.is_acquired());
  Lock other = HeldOrFail(store, r);
}

// --- Shared locks ------------------------------------------------------------------

void ReadersCoexist(void**) {
  auto [store, r] = OpenOrSkipWithout(Caps().shared, "readers");
  Lock a = HeldSharedOrFail(store, r), b = HeldSharedOrFail(store, r),
       c = HeldSharedOrFail(store, r);
  Lock writer = LockOrFail(store, r);
  assert_false(TryOrFail(writer));  // a writer conflicts with readers...
  assert_true(Held(a));       // ...and does not disturb them
  assert_true(Held(b));
  assert_true(Held(c));
}

void ReaderConflictsWithWriter(void**) {
  auto [store, r] = OpenOrSkipWithout(Caps().shared, "rw");
  Lock writer = HeldOrFail(store, r), reader = LockOrFail(store, r);
  assert_false(TryOrFail(reader, LockMode::kShared));
  assert_true(Held(writer));
  ASSERT_OK(writer.Release());
  assert_true(TryOrFail(reader, LockMode::kShared));
}

void SoleReaderPromotes(void**) {
  auto [store, r] = OpenOrSkipWithout(Caps().shared, "promote");
  Lock reader = HeldSharedOrFail(store, r);
  assert_true(TryOrFail(reader, LockMode::kExclusive));
  assert_int_equal(static_cast<int>(reader.mode()), static_cast<int>(LockMode::kExclusive));
  Lock other = LockOrFail(store, r);
  assert_false(TryOrFail(other, LockMode::kShared));
}

void TwoReadersCannotPromote(void**) {
  auto [store, r] = OpenOrSkipWithout(Caps().shared, "nopromote");
  Lock a = HeldSharedOrFail(store, r), b = HeldSharedOrFail(store, r);
  assert_false(TryOrFail(a, LockMode::kExclusive));
  assert_true(Held(b));
  Lock writer = LockOrFail(store, r);
  assert_false(TryOrFail(writer));
}

void WriterDemotesAndLetsReadersIn(void**) {
  auto [store, r] = OpenOrSkipWithout(Caps().shared, "demote");
  Lock writer = HeldOrFail(store, r), reader = LockOrFail(store, r);
  assert_false(TryOrFail(reader, LockMode::kShared));
  assert_true(TryOrFail(writer, LockMode::kShared));
  assert_true(TryOrFail(reader, LockMode::kShared));
  assert_true(Held(writer));
}

// --- Counting stores ------------------------------------------------------------------

void PermitsBoundHolders(void**) {
  auto [store, r] = OpenOrSkipWithout(Caps().counting, "permits");
  LockOptions options;
  options.permits = 2;
  Lock a = LockOrFail(store, r, options), b = LockOrFail(store, r, options),
       c = LockOrFail(store, r, options);
  assert_true(TryOrFail(a));
  assert_true(TryOrFail(b));
  assert_false(TryOrFail(c));
  ASSERT_OK(a.Release());
  assert_true(TryOrFail(c));
}

void PermitsRefusedWithoutCounting(void**) {
  if (Caps().counting) skip();
  auto store = OpenStoreOrFail(g_dsn);
  LockOptions options;
  options.permits = 3;
  ASSERT_CODE(Lock::Create(store, UniqueResource("nocount"), options),
              absl::StatusCode::kInvalidArgument);
}

}  // namespace ipclock_test
