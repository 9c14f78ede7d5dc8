// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// LockGuard: it releases what it acquired at the end of its scope, and it
// follows its Lock when the Lock is moved, so that it neither releases a
// moved-from Lock (leaving the moved-to one held) nor touches a Lock that
// is gone. Run under ASan, a guard that kept a stale pointer fails here.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/lock_guard.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store.h"
#include "ipclock/stores/in_memory_store.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::LockGuard;
using ipclock::Store;
using namespace ipclock_test;

LockGuard GuardOrFail(Lock& lock) {
  absl::StatusOr<LockGuard> guard = LockGuard::Acquire(lock, absl::ZeroDuration());
  ASSERT_OK(guard);
  return *std::move(guard);
}

void ReleasesAtScopeEnd(void**) {
  std::shared_ptr<Store> store = ipclock::NewInMemoryStore();
  const std::string r = UniqueResource("scope");
  Lock lock = LockOrFail(store, r);
  {
    LockGuard guard = GuardOrFail(lock);
    assert_true(guard.holds());
    assert_false(IsFree(store, r));
  }
  assert_true(IsFree(store, r));
  assert_false(lock.is_acquired());
  // A held Lock is refused: a guard releases only what it acquired.
  assert_true(TryOrFail(lock));
  ASSERT_CODE(LockGuard::Acquire(lock), absl::StatusCode::kFailedPrecondition);
}

// The guarded Lock moved to another variable: the guard releases that one.
void FollowsAMovedLock(void**) {
  std::shared_ptr<Store> store = ipclock::NewInMemoryStore();
  const std::string r = UniqueResource("moved");
  Lock lock = LockOrFail(store, r);
  LockGuard guard = GuardOrFail(lock);
  Lock moved = std::move(lock);
  assert_ptr_equal(&guard.lock(), &moved);
  assert_true(moved.is_acquired());
  ASSERT_OK(guard.Release());
  assert_false(moved.is_acquired());
  assert_true(IsFree(store, r));
}

// Locks in a vector that grows (and moves them) keep their guards; the old
// storage is freed, so a guard with a stale pointer is a use after free.
void FollowsLocksAcrossAGrowingVector(void**) {
  std::shared_ptr<Store> store = ipclock::NewInMemoryStore();
  std::vector<std::string> names;
  std::vector<Lock> locks;
  locks.reserve(1);
  std::vector<LockGuard> guards;
  for (int i = 0; i < 5; ++i) {
    names.push_back(UniqueResource("vector"));
    locks.push_back(LockOrFail(store, names.back()));
    guards.push_back(GuardOrFail(locks.back()));
  }
  locks.reserve(locks.capacity() * 4);
  for (size_t i = 0; i < locks.size(); ++i) {
    assert_ptr_equal(&guards[i].lock(), &locks[i]);
    assert_false(IsFree(store, names[i]));
  }
  guards.clear();
  for (size_t i = 0; i < locks.size(); ++i) {
    assert_false(locks[i].is_acquired());
    assert_true(IsFree(store, names[i]));
  }
}

// The guarded Lock destroyed first (which releases it): the guard then holds
// nothing and touches nothing.
void OutlivingItsLock(void**) {
  std::shared_ptr<Store> store = ipclock::NewInMemoryStore();
  const std::string r = UniqueResource("gone");
  std::optional<LockGuard> guard;
  {
    Lock lock = LockOrFail(store, r);
    guard.emplace(GuardOrFail(lock));
  }
  assert_false(guard->holds());
  assert_true(IsFree(store, r));
  ASSERT_OK(guard->Release());
}

// A Lock moved onto a guarded one ends that acquisition and its guard; the
// guard does not release what was moved in.
void MovedOntoEndsTheGuard(void**) {
  std::shared_ptr<Store> store = ipclock::NewInMemoryStore();
  const std::string first = UniqueResource("first");
  const std::string second = UniqueResource("second");
  Lock lock = LockOrFail(store, first);
  LockGuard guard = GuardOrFail(lock);
  Lock other = HeldOrFail(store, second);
  lock = std::move(other);
  assert_false(guard.holds());
  assert_true(IsFree(store, first));
  ASSERT_OK(guard.Release());
  assert_true(lock.is_acquired());
  assert_false(IsFree(store, second));
}

// A guarded Lock handed to a watch: the watch owns its release now.
void WatchTakesTheReleaseOver(void**) {
  std::shared_ptr<Store> store = ipclock::NewInMemoryStore();
  const std::string r = UniqueResource("watched");
  Lock lock = LockOrFail(store, r);
  LockGuard guard = GuardOrFail(lock);
  ipclock::LockWatch watch;
  absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(lock));
  ASSERT_OK(watched);
  assert_false(guard.holds());
  ASSERT_OK(guard.Release());
  assert_false(IsFree(store, r));
  ASSERT_OK(watched->Release());
  assert_true(IsFree(store, r));
}

// A moved guard is the one that releases.
void MovedGuardReleases(void**) {
  std::shared_ptr<Store> store = ipclock::NewInMemoryStore();
  const std::string r = UniqueResource("guard-moved");
  Lock lock = LockOrFail(store, r);
  LockGuard first = GuardOrFail(lock);
  LockGuard second = std::move(first);
  assert_false(first.holds());
  Lock moved = std::move(lock);  // the Lock moves too: `second` follows it
  assert_ptr_equal(&second.lock(), &moved);
  ASSERT_OK(first.Release());
  assert_false(IsFree(store, r));
  ASSERT_OK(second.Release());
  assert_true(IsFree(store, r));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ReleasesAtScopeEnd),
      cmocka_unit_test(FollowsAMovedLock),
      cmocka_unit_test(FollowsLocksAcrossAGrowingVector),
      cmocka_unit_test(OutlivingItsLock),
      cmocka_unit_test(MovedOntoEndsTheGuard),
      cmocka_unit_test(WatchTakesTheReleaseOver),
      cmocka_unit_test(MovedGuardReleases),
  };
  return cmocka_run_group_tests_name("lock_guard", tests, nullptr, nullptr);
}
