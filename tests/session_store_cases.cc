// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "session_store_cases.h"

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

using ipclock::Lock;

namespace {

SessionStore SessionsOf(void** state) {
  const auto* suite = static_cast<const SessionSuite*>(*state);
  RequireEnv(suite->server_var);
  return suite->sessions();
}

}  // namespace

void KilledSessionLosesTheLock(void** state) { KilledSessionLosesTheLock(SessionsOf(state)); }

void ForkedChildCannotUseParentsKey(void** state) {
  ForkedChildCannotUseParentsKey(SessionsOf(state));
}

void KilledSessionLosesTheLock(const SessionStore& s) {
  auto store = OpenStoreOrFail(s.dsn);
  const std::string r1 = UniqueResource(s.tag + "-kill-a");
  const std::string r2 = UniqueResource(s.tag + "-kill-b");
  Lock checked = LockOrFail(store, r1);
  Lock released = LockOrFail(store, r2);
  assert_true(TryOrFail(checked));
  assert_true(TryOrFail(released));
  assert_true(IsStillHeld(checked));
  s.end_holder(r1);
  s.end_holder(r2);
  // Asked, the store finds the session gone: the lock is not held.
  absl::Status held = checked.CheckAcquired();
  ASSERT_CODE(held, absl::StatusCode::kAborted);
  print_message("%s\n", held.ToString().c_str());
  if (!s.lost_says.empty()) assert_true(absl::StrContains(held.message(), s.lost_says));
  assert_false(checked.is_acquired());
  if (s.after_loss) s.after_loss(store, checked);
  // Not asked first, the release itself finds out.
  absl::Status rel = released.Release();
  ASSERT_CODE(rel, absl::StatusCode::kAborted);
  if (!s.release_says.empty()) assert_true(absl::StrContains(rel.message(), s.release_says));
  // The server released both when it ended the sessions.
  assert_true(ForkedChildGets(s.dsn, r1, ipclock::LockMode::kExclusive, s.freed_within));
  assert_true(ForkedChildGets(s.dsn, r2, ipclock::LockMode::kExclusive, s.freed_within));
  // The keys work again, on fresh sessions, and the store's pool has
  // dropped nothing it should not reuse.
  assert_true(TryOrFail(checked));
  assert_true(TryOrFail(released));
  assert_false(ForkedChildGets(s.dsn, r1));
}

void ForkedChildCannotUseParentsKey(const SessionStore& s) {
  auto store = OpenStoreOrFail(s.dsn);
  const std::string r = UniqueResource(s.tag + "-fork");
  Lock lock = HeldOrFail(store, r);
  pid_t child = ForkChild([&] {
    ipclock::Key& key = ipclock::internal::LockAccess::key(lock);
    if (ipclock::StoreCalls::Release(*store, key).code() != absl::StatusCode::kFailedPrecondition) {
      return 2;
    }
    if (s.probe(*store, key).code() != absl::StatusCode::kFailedPrecondition) return 3;
    {
      // Destroys the key's state, which closes the child's copy of the
      // connection without a word to the server.
      Lock copy = std::move(lock);
      copy.Abandon();
    }
    // The store's other sessions are the parent's too: the child's new key
    // gets one of its own, and finds the lock taken.
    absl::StatusOr<Lock> other = Lock::Create(store, r);
    if (!other.ok() || other->TryAcquire().value_or(true)) return 4;
    return 0;
  });
  assert_int_equal(WaitChild(child), 0);
  assert_true(IsStillHeld(lock));
  assert_false(ForkedChildGets(s.dsn, r));
}

}  // namespace ipclock_test
