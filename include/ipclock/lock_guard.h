// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: lock_guard.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/ipclock.h includes it).
//
// `LockGuard` holds a `Lock` for one scope and releases it at the end of the
// scope, leaving the Lock itself alive for the next time. Keeping one Lock
// per resource that a program takes often, and a guard per use, is the fast
// path of every store: the lock file stays open, the semaphore attached, the
// slot bound.
//
// Example:
//
//   absl::Status Flush(ipclock::Lock& journal_lock) {
//     absl::StatusOr<ipclock::LockGuard> guard =
//         ipclock::LockGuard::Acquire(journal_lock, absl::Seconds(2));
//     if (!guard.ok()) return guard.status();  // DeadlineExceeded: busy
//     // ... write the journal ...
//     return guard->Release();  // or let the guard release at scope exit
//   }
//
// A guard refers to its Lock and follows it: when the Lock is moved (into
// another variable, or by a container that grows), the guard holds the Lock
// at its new place. When the Lock is destroyed, moved onto (its acquisition
// then ends), or handed to a `LockWatch` (which takes its release over), the
// guard is left holding nothing, and its release does nothing. Movable, not
// copyable; like a Lock, not thread-safe.

#ifndef IPCLOCK_LOCK_GUARD_H_
#define IPCLOCK_LOCK_GUARD_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"

namespace ipclock {

class LockGuard {
 public:
  // Acquires `lock`, waiting up to `timeout` (zero tries once). The codes are
  // those of `Lock::Acquire()`: DeadlineExceeded when the lock stayed busy.
  // FailedPrecondition if `lock` is already held: a guard releases only
  // what it acquired.
  static absl::StatusOr<LockGuard> Acquire(
      Lock& lock, absl::Duration timeout = absl::InfiniteDuration(),
      LockMode mode = LockMode::kExclusive) {
    if (lock.is_acquired()) {
      return absl::FailedPreconditionError(
          "ipclock: LockGuard on a Lock that is already held");
    }
    if (absl::Status s = lock.Acquire(timeout, mode); !s.ok()) return s;
    return LockGuard(&lock);
  }

  LockGuard(LockGuard&& other) noexcept : lock_(std::exchange(other.lock_, nullptr)) {
    if (lock_ != nullptr) lock_->guard_ = this;
  }
  LockGuard& operator=(LockGuard&& other) noexcept {
    if (this != &other) {
      Release().IgnoreError();
      lock_ = std::exchange(other.lock_, nullptr);
      if (lock_ != nullptr) lock_->guard_ = this;
    }
    return *this;
  }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

  // Releases; a failure is dropped (call `Release()` to see it).
  ~LockGuard() { Release().IgnoreError(); }

  // Releases now, with `Lock::Release()`'s status (Aborted if the lock was
  // lost while held). OK and nothing done if already released, or if the
  // guard holds nothing (see above).
  absl::Status Release() {
    Lock* lock = std::exchange(lock_, nullptr);
    if (lock == nullptr) return absl::OkStatus();
    lock->guard_ = nullptr;
    return lock->Release();
  }

  // Whether the guard still holds a Lock to release.
  bool holds() const { return lock_ != nullptr; }
  // The Lock it holds, wherever it was moved. Only while `holds()`.
  Lock& lock() const { return *lock_; }

 private:
  friend class Lock;
  explicit LockGuard(Lock* lock) : lock_(lock) {
    // A Lock has one guard: one released by hand and acquired again under a
    // new guard leaves the old one nothing to release.
    if (lock_->guard_ != nullptr) lock_->guard_->lock_ = nullptr;
    lock_->guard_ = this;
  }
  Lock* lock_;  // set and cleared by the Lock too, as it moves or goes
};

}  // namespace ipclock

#endif  // IPCLOCK_LOCK_GUARD_H_
