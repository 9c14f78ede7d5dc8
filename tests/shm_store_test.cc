// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The shm store beyond the conformance suite: owner death after kill -9,
// exclusion between processes, fencing across slot reuse, a full table,
// layout and option mismatches, a segment removed under a running store, the
// owner thread rule, and priority-inheritance waits.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/stores/shm_store.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "stores/shm/shm_mutex_store.h"
#include "shm_test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::ShmStoreOptions;
using ipclock::Store;
using namespace ipclock_test;

void KilledHolderReportsOwnerDeath(void**) {
  const ScratchSegment segment("kill");
  const std::string& name = segment.name();
  auto store = OpenShmStore(absl::StrCat("shm://", name));
  Signal locked;
  pid_t child = HoldInChild(store, "job", &locked);
  assert_int_equal(locked.Wait(), 'x');
  // A waiter already asleep on the mutex when the holder dies gets it.
  struct Shared {
    std::atomic<int> died{-1};
  };
  Shared* shared = SharedMemory<Shared>();
  Signal waiting;
  pid_t waiter = ForkChild([&] {
    absl::StatusOr<Lock> lock = Lock::Create(store, "job");
    if (!lock.ok()) return 2;
    waiting.Notify();
    if (!lock->Acquire(absl::Seconds(20)).ok()) return 3;
    shared->died = lock->previous_owner_died() ? 1 : 0;
    return lock->Release().ok() ? 0 : 4;
  });
  assert_int_equal(waiting.Wait(), 'x');
  usleep(100 * 1000);
  KillChild(child);
  assert_int_equal(WaitChild(waiter), 0);
  assert_int_equal(shared->died.load(), 1);
  // The waiter released cleanly: nobody is told again.
  Lock after = HeldOrFail(store, "job");
  assert_false(after.previous_owner_died());
  ASSERT_OK(after.Release());

  // Killed with no waiter: the next holder, even a new process with a new
  // store object, is told; the one after is not.
  child = HoldInChild(store, "job", &locked);
  assert_int_equal(locked.Wait(), 'x');
  assert_false(TryOrFail(after));
  KillChild(child);
  auto fresh = OpenShmStore(absl::StrCat("shm://", name));
  Lock next = LockOrFail(fresh, "job");
  ASSERT_OK(next.Acquire(absl::Seconds(10)));
  assert_true(next.previous_owner_died());
  ASSERT_OK(next.Release());
  assert_true(TryOrFail(after));
  assert_false(after.previous_owner_died());
}

void ProcessesCountWithoutLostUpdates(void**) {
  const ScratchSegment segment("count");
  const std::string& name = segment.name();
  auto store = OpenShmStore(absl::StrCat("shm://", name));
  OverlapCheck check;
  check.iters = 2000;
  check.yield_every = 64;
  check.open = [&](int p) -> absl::StatusOr<Lock> {
    // Half the children bring their own store object and mapping.
    std::shared_ptr<Store> mine = store;
    if (p % 2 == 1) {
      absl::StatusOr<std::shared_ptr<Store>> s =
          ipclock::StoreFromDsn(absl::StrCat("shm://", name));
      if (!s.ok()) return s.status();
      mine = *s;
    }
    return Lock::Create(mine, "counter");
  };
  check.take = [](Lock& lock, int) { return lock.Acquire(absl::Seconds(30)).ok(); };
  CheckProcessesNeverOverlap(check);
}

void FenceGrowsAcrossSlotReuse(void**) {
  const ScratchSegment segment("fence");
  const std::string& name = segment.name();
  auto store = OpenShmStore(absl::StrCat("shm://", name, "?capacity=2"));
  uint64_t last = 0;
  {
    Lock lock = LockOrFail(store, "a");
    for (int i = 0; i < 5; ++i) {
      assert_true(TryOrFail(lock));
      assert_true(lock.fence().has_value());
      assert_true(*lock.fence() > last);
      last = *lock.fence();
      ASSERT_OK(lock.Release());
    }
  }
  // Push "a" out of the two slots, then bring it back.
  for (const char* other : {"b", "c", "d"}) {
    Lock lock = HeldOrFail(store, other);
  }
  Lock again = HeldOrFail(store, "a");
  assert_true(*again.fence() > last);
}

void FullTableIsResourceExhausted(void**) {
  const ScratchSegment segment("full");
  const std::string& name = segment.name();
  auto store = OpenShmStore(absl::StrCat("shm://", name, "?capacity=4"));
  std::vector<Lock> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(LockOrFail(store, absl::StrCat("r", i)));
    assert_true(TryOrFail(held.back()));
  }
  Lock extra = LockOrFail(store, "r4");
  absl::StatusOr<bool> got = extra.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kResourceExhausted);
  AssertMessageHas(got.status(), "capacity");
  // A name that is already bound still works, as contention.
  Lock rival = LockOrFail(store, "r0");
  assert_false(TryOrFail(rival));
  ASSERT_OK(held[2].Release());
  assert_true(TryOrFail(extra));
}

void SlotsAreReclaimed(void**) {
  const ScratchSegment segment("reclaim");
  const std::string& name = segment.name();
  auto store = OpenShmStore(absl::StrCat("shm://", name, "?capacity=4"));
  // Far more names than slots, one after another.
  for (int i = 0; i < 200; ++i) {
    Lock lock = HeldOrFail(store, absl::StrCat("name-", i));
  }
  // Released Locks that stay alive keep a reference but not their slot.
  std::vector<Lock> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(LockOrFail(store, absl::StrCat("idle-", i)));
    assert_true(TryOrFail(idle.back()));
    ASSERT_OK(idle.back().Release());
  }
  Lock newcomer = HeldOrFail(store, "newcomer");
  // The idle Locks notice that their slots moved on and find new ones.
  ASSERT_OK(newcomer.Release());
  for (Lock& l : idle) {
    TakeAndRelease(l);
  }
  // References of a killed process never come back; its slots still do.
  pid_t child = ForkChild([&] {
    std::vector<Lock>* keep = new std::vector<Lock>();
    for (int i = 0; i < 4; ++i) {
      absl::StatusOr<Lock> l = Lock::Create(store, absl::StrCat("child-", i));
      if (!l.ok() || !l->TryAcquire().value_or(false) || !l->Release().ok()) return 2;
      keep->push_back(*std::move(l));
    }
    kill(getpid(), SIGKILL);
    return 3;
  });
  assert_int_equal(WaitChild(child), 128 + SIGKILL);
  for (int i = 0; i < 8; ++i) {
    Lock lock = HeldOrFail(store, absl::StrCat("after-", i));
  }
}

// More names than slots, used by several processes at once: slots move
// between names all the time, and each name must still exclude.
void ExclusionWhileSlotsMove(void**) {
  const ScratchSegment segment("churn");
  const std::string& name = segment.name();
  auto store = OpenShmStore(absl::StrCat("shm://", name, "?capacity=4"));
  constexpr int kNames = 7, kProcs = 3, kIters = 3000;
  struct Shared {
    std::atomic<int> inside[kNames];
    std::atomic<int> violations{0};
    std::atomic<int> errors{0};
  };
  Shared* shared = SharedMemory<Shared>();
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pids.push_back(ForkChild([&] {
      // One Lock per name, reused: their cached slots keep being taken.
      std::vector<Lock> locks;
      for (int n = 0; n < kNames; ++n) {
        absl::StatusOr<Lock> l = Lock::Create(store, absl::StrCat("name-", n));
        if (!l.ok()) return 2;
        locks.push_back(*std::move(l));
      }
      unsigned seed = static_cast<unsigned>(getpid());
      for (int i = 0; i < kIters; ++i) {
        int n = static_cast<int>(rand_r(&seed) % kNames);
        // At most kProcs slots are held at once, so one is always free.
        if (!locks[n].Acquire(absl::Seconds(30)).ok()) {
          shared->errors++;
          return 3;
        }
        if (shared->inside[n].fetch_add(1) != 0) shared->violations++;
        if (i % 16 == 0) sched_yield();
        shared->inside[n].fetch_sub(1);
        if (!locks[n].Release().ok()) return 4;
      }
      return 0;
    }));
  }
  for (pid_t pid : pids) assert_int_equal(WaitChild(pid, 90), 0);
  assert_int_equal(shared->violations.load(), 0);
  assert_int_equal(shared->errors.load(), 0);
}

void LongNamesAreDistinct(void**) {
  const ScratchSegment segment("long");
  const std::string& name = segment.name();
  auto store = OpenShmStore(absl::StrCat("shm://", name));
  std::string a(300, 'x'), b(300, 'x');
  b.back() = 'y';
  std::string inline_max(200, 'q'), inline_max2(200, 'q');
  inline_max2[0] = 'r';
  Lock la = LockOrFail(store, a), lb = LockOrFail(store, b);
  Lock lc = LockOrFail(store, inline_max), ld = LockOrFail(store, inline_max2);
  assert_true(TryOrFail(la));
  assert_true(TryOrFail(lb));
  assert_true(TryOrFail(lc));
  assert_true(TryOrFail(ld));
  Lock rival = LockOrFail(store, a);
  assert_false(TryOrFail(rival));
  Lock rival2 = LockOrFail(store, inline_max);
  assert_false(TryOrFail(rival2));
}

void LayoutMismatchIsRefused(void**) {
  const std::string name = UniqueShmName("layout");
  {
    auto store = OpenShmStore(absl::StrCat("shm://", name));
  }
  // Forge another layout version into the existing segment.
  int fd = shm_open(absl::StrCat("/ipclock.", name).c_str(), O_RDWR, 0);
  assert_true(fd >= 0);
  void* p = mmap(nullptr, sizeof(ipclock::ShmHeader), PROT_READ | PROT_WRITE,
                 MAP_SHARED, fd, 0);
  assert_true(p != MAP_FAILED);
  auto* h = static_cast<ipclock::ShmHeader*>(p);
  h->version = 99;
  absl::StatusOr<std::shared_ptr<Store>> s =
      ipclock::StoreFromDsn(absl::StrCat("shm://", name));
  ASSERT_CODE(s, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(s.status(), "layout version 99");
  h->version = ipclock::kShmLayoutVersion;
  h->word_size = 4;
  s = ipclock::StoreFromDsn(absl::StrCat("shm://", name));
  ASSERT_CODE(s, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(s.status(), "word size");
  h->word_size = sizeof(void*);
  // The pi setting is the segment's: a store that asks otherwise is refused.
  s = ipclock::StoreFromDsn(absl::StrCat("shm://", name, "?pi=true"));
  ASSERT_CODE(s, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(s.status(), "pi=");
  // Somebody else's file under our name.
  h->magic.store(0x1234, std::memory_order_release);
  s = ipclock::StoreFromDsn(absl::StrCat("shm://", name));
  ASSERT_CODE(s, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(s.status(), "not an ipclock segment");
  munmap(p, sizeof(ipclock::ShmHeader));
  close(fd);
  ASSERT_OK(ipclock::RemoveShmSegment(name));

  // A creator that died before initializing (an empty file, nobody holding
  // its flock) does not block the next store: it initializes the segment.
  fd = shm_open(absl::StrCat("/ipclock.", name).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  assert_true(fd >= 0);
  close(fd);
  auto store = OpenShmStore(absl::StrCat("shm://", name, "?capacity=8"));
  Lock lock = HeldOrFail(store, "works");
  ASSERT_OK(ipclock::RemoveShmSegment(name));
}

void BadDsnsAreRefused(void**) {
  const std::string name = UniqueShmName("dsn");
  ASSERT_CODE(ipclock::StoreFromDsn(absl::StrCat("shm://", name, "?capacty=8")),
              absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn(absl::StrCat("shm://", name, "?capacity=0")),
              absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("shm://bad/name"), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("shm:///abs"), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("shm://a%2Fb"), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn(absl::StrCat("shm://", std::string(201, 'n'))),
              absl::StatusCode::kInvalidArgument);
  assert_false(ShmSegmentExists(name));
  // The mode is applied exactly, whatever the umask.
  mode_t old = umask(077);
  auto store = OpenShmStore(absl::StrCat("shm://", name, "?mode=0640"));
  umask(old);
  struct stat st;
  assert_int_equal(stat(absl::StrCat("/dev/shm/ipclock.", name).c_str(), &st), 0);
  assert_int_equal(st.st_mode & 0777, 0640);
  ASSERT_OK(ipclock::RemoveShmSegment(name));
  ASSERT_CODE(ipclock::RemoveShmSegment(name), absl::StatusCode::kNotFound);
}

void RemovedSegmentIsDetected(void**) {
  const std::string name = UniqueShmName("removed");
  auto store = OpenShmStore(absl::StrCat("shm://", name));
  Lock reused = LockOrFail(store, "job");
  TakeAndRelease(reused);

  ASSERT_OK(ipclock::RemoveShmSegment(name));  // what RemoveIPC does
  // First acquisitions check the link at most once per coarse clock tick.
  usleep(25 * 1000);
  // A process started afterwards makes a new segment and takes the lock.
  auto newer = OpenShmStore(absl::StrCat("shm://", name));
  Lock theirs = HeldOrFail(newer, "job");
  // The old store must not hand out a second "job".
  Lock ours = LockOrFail(store, "job");
  absl::StatusOr<bool> got = ours.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(got.status(), "RemoveIPC");
  AssertMessageHas(got.status(), "new one");
  // Once detected, handles that cached their slot are refused too.
  ASSERT_CODE(reused.TryAcquire(), absl::StatusCode::kFailedPrecondition);
  ASSERT_CODE(reused.Acquire(absl::Milliseconds(50)), absl::StatusCode::kFailedPrecondition);
  ASSERT_OK(ipclock::RemoveShmSegment(name));
}

void OwnerThreadRule(void**) {
  const ScratchSegment segment("thread");
  const std::string& name = segment.name();
  auto store = OpenShmStore(absl::StrCat("shm://", name));
  Lock lock = HeldOrFail(store, "job");
  absl::Status from_other;
  std::thread([&] { from_other = ipclock::StoreCalls::Release(ipclock::internal::LockAccess::store(lock), ipclock::internal::LockAccess::key(lock)); }).join();
  ASSERT_CODE(from_other, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(from_other, "thread");
  assert_true(*ipclock::StoreCalls::IsHeld(*store, ipclock::internal::LockAccess::key(lock)));
  // The same thread, through a second Lock: no deadlock.
  Lock second = LockOrFail(store, "job");
  assert_false(TryOrFail(second));
  absl::Status forever = second.Acquire();
  ASSERT_CODE(forever, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(forever, "self-deadlock");
  double t0 = NowSeconds();
  ASSERT_CODE(second.Acquire(absl::Milliseconds(200)), absl::StatusCode::kDeadlineExceeded);
  double waited = NowSeconds() - t0;
  if (waited < 0.19 || waited > 5) fail_msg("waited %.3f s for 0.2 s", waited);
  // Another thread still sees it held, and the owner can release.
  bool other_got = true;
  std::thread([&] {
    absl::StatusOr<Lock> l = Lock::Create(store, "job");
    other_got = !l.ok() || l->TryAcquire().value_or(true);
  }).join();
  assert_false(other_got);
  // A forked child has a copy of the held Lock but not the mutex.
  pid_t child = ForkChild([&] {
    absl::StatusOr<bool> exists = ipclock::StoreCalls::IsHeld(*store, ipclock::internal::LockAccess::key(lock));
    if (!exists.ok() || *exists) return 2;
    if (ipclock::StoreCalls::Acquire(*store, ipclock::internal::LockAccess::key(lock), ipclock::LockMode::kExclusive,
                    ipclock::Deadline::Past()).status().code() !=
        absl::StatusCode::kFailedPrecondition) {
      return 3;
    }
    if (ipclock::StoreCalls::Release(*store, ipclock::internal::LockAccess::key(lock)).code() != absl::StatusCode::kFailedPrecondition) {
      return 4;
    }
    return 0;
  });
  assert_int_equal(WaitChild(child), 0);
  assert_true(*ipclock::StoreCalls::IsHeld(*store, ipclock::internal::LockAccess::key(lock)));
  assert_false(TryOrFail(second));
  ASSERT_OK(lock.Release());
  assert_true(TryOrFail(second));
}

// A Lock destroyed on another thread than the one holding it leaves the
// lock held (the owner thread rule), and its store may go too. The owner
// thread's robust list still points into the segment: were it unmapped,
// that thread's next lock of any robust mutex would write into the hole
// (SIGSEGV), and its exit would let the kernel write there. The mapping
// stays; the lock comes back as an owner death when the thread exits.
void MappingOutlivesAHeldLockWhoseStoreIsGone(void**) {
  const std::string name = UniqueShmName("orphan");
  const std::string other = UniqueShmName("orphan2");
  pid_t child = ForkChild([&] {
    std::shared_ptr<Store> store = OpenShmStoreOrNull(absl::StrCat("shm://", name));
    if (store == nullptr) return 2;
    absl::StatusOr<Lock> lock = Lock::Create(store, "job");
    if (!lock.ok()) return 3;
    std::atomic<int> step{0};
    int result = 0;
    std::thread owner([&] {
      if (!lock->TryAcquire().value_or(false)) {
        result = 4;
        return;
      }
      step = 1;
      while (step.load() != 2) usleep(1000);
      // Its store is gone now. Lock another robust mutex in another segment.
      std::shared_ptr<Store> second = OpenShmStoreOrNull(absl::StrCat("shm://", other));
      absl::StatusOr<Lock> l2 = second ? Lock::Create(second, "b") : absl::StatusOr<Lock>();
      if (!l2.ok() || !l2->TryAcquire().value_or(false) || !l2->Release().ok()) result = 5;
    });
    while (step.load() != 1) usleep(1000);
    {
      Lock gone = *std::move(lock);  // destroyed here, on the wrong thread
    }
    store.reset();
    step = 2;
    owner.join();  // exits holding "job"
    return result;
  });
  assert_int_equal(WaitChild(child), 0);
  auto store = OpenShmStore(absl::StrCat("shm://", name));
  Lock next = HeldOrFail(store, "job");
  assert_true(next.previous_owner_died());
  ASSERT_OK(next.Release());
  ASSERT_OK(ipclock::RemoveShmSegment(name));
  ASSERT_OK(ipclock::RemoveShmSegment(other));
}

// Timed, blocking and try acquisitions against a holder in another thread.
void WaitsOn(const std::string& dsn) {
  auto store = OpenShmStore(dsn);
  Lock holder = LockOrFail(store, "job");
  Lock waiter = LockOrFail(store, "job");
  assert_true(TryOrFail(holder));
  assert_false(TryOrFail(waiter));

  double t0 = NowSeconds();
  absl::Status s = waiter.Acquire(absl::Milliseconds(300));
  double waited = NowSeconds() - t0;
  ASSERT_CODE(s, absl::StatusCode::kDeadlineExceeded);
  if (waited < 0.29 || waited > 5) fail_msg("waited %.3f s for a 0.3 s timeout", waited);
  ASSERT_OK(holder.Release());

  // A blocking wait and a timed wait each get the lock when it is released.
  for (bool forever : {true, false}) {
    std::atomic<bool> locked{false};
    std::atomic<bool> release{false};
    std::thread owner([&] {
      absl::StatusOr<Lock> l = Lock::Create(store, "job");
      if (!l.ok() || !l->TryAcquire().value_or(false)) return;
      locked = true;
      while (!release) usleep(1000);
      l->Release().IgnoreError();
    });
    while (!locked) usleep(1000);
    std::thread releaser([&] {
      usleep(100 * 1000);
      release = true;
    });
    t0 = NowSeconds();
    ASSERT_OK(forever ? waiter.Acquire() : waiter.Acquire(absl::Seconds(20)));
    waited = NowSeconds() - t0;
    owner.join();
    releaser.join();
    if (waited < 0.09 || waited > 10) fail_msg("woke after %.3f s", waited);
    ASSERT_OK(waiter.Release());
  }
}

void TimedAndBlockingWaits(void**) {
  const ScratchSegment segment("waits");
  const std::string& name = segment.name();
  WaitsOn(absl::StrCat("shm://", name));
}

void PriorityInheritanceWaits(void**) {
  const ScratchSegment segment("pi");
  const std::string& name = segment.name();
  WaitsOn(absl::StrCat("shm://", name, "?pi=true"));
  // Owner death works on PI mutexes too.
  auto store = OpenShmStore(absl::StrCat("shm://", name, "?pi=true"));
  Signal locked;
  pid_t child = HoldInChild(store, "job", &locked);
  assert_int_equal(locked.Wait(), 'x');
  KillChild(child);
  Lock next = LockOrFail(store, "job");
  ASSERT_OK(next.Acquire(absl::Seconds(10)));
  assert_true(next.previous_owner_died());
}

// Fairness is the kernel's queue of priority-inheritance mutexes: fair=true
// and pi=true make and accept the same segment, whose stores declare both
// capabilities; a store asking for plain mutexes refuses it, and a plain
// segment declares neither.
void FairAndPiShareOneKindOfSegment(void**) {
  const std::string name = UniqueShmName("fair");
  auto fair = OpenShmStore(absl::StrCat("shm://", name, "?fair=true"));
  assert_true(fair->capabilities().fair);
  assert_true(fair->capabilities().priority_inheritance);
  auto pi = OpenShmStore(absl::StrCat("shm://", name, "?pi=true&fair=false"));
  assert_true(pi->capabilities().fair);
  absl::StatusOr<std::shared_ptr<Store>> plain =
      ipclock::StoreFromDsn(absl::StrCat("shm://", name));
  ASSERT_CODE(plain, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(plain.status(), "priority-inheritance mutexes (pi=true or fair=true)");
  ASSERT_OK(ipclock::RemoveShmSegment(name));
  const std::string other = UniqueShmName("unfair");
  auto unfair = OpenShmStore(absl::StrCat("shm://", other));
  assert_false(unfair->capabilities().fair);
  assert_false(unfair->capabilities().priority_inheritance);
  ASSERT_CODE(ipclock::StoreFromDsn(absl::StrCat("shm://", other, "?fair=true")),
              absl::StatusCode::kFailedPrecondition);
  ASSERT_CODE(ipclock::StoreFromDsn(absl::StrCat("shm://", other, "?fair=maybe")),
              absl::StatusCode::kInvalidArgument);
  ASSERT_OK(ipclock::RemoveShmSegment(other));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(KilledHolderReportsOwnerDeath),
      cmocka_unit_test(FairAndPiShareOneKindOfSegment),
      cmocka_unit_test(ProcessesCountWithoutLostUpdates),
      cmocka_unit_test(FenceGrowsAcrossSlotReuse),
      cmocka_unit_test(FullTableIsResourceExhausted),
      cmocka_unit_test(SlotsAreReclaimed),
      cmocka_unit_test(ExclusionWhileSlotsMove),
      cmocka_unit_test(LongNamesAreDistinct),
      cmocka_unit_test(LayoutMismatchIsRefused),
      cmocka_unit_test(BadDsnsAreRefused),
      cmocka_unit_test(RemovedSegmentIsDetected),
      cmocka_unit_test(OwnerThreadRule),
      cmocka_unit_test(MappingOutlivesAHeldLockWhoseStoreIsGone),
      cmocka_unit_test(TimedAndBlockingWaits),
      cmocka_unit_test(PriorityInheritanceWaits),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
