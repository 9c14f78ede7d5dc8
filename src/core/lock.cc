// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/lock.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/lease_overrun.h"

namespace ipclock {

absl::StatusOr<Lock> Lock::Create(std::shared_ptr<Store> store,
                                  absl::string_view resource,
                                  const LockOptions& options) {
  if (store == nullptr) {
    return absl::InvalidArgumentError("ipclock: Lock::Create with a null store");
  }
  absl::StatusOr<Key> key = Key::Create(resource, options.key_options);
  if (!key.ok()) return key.status();
  if (options.permits == 0) {
    return StoreError(absl::StatusCode::kInvalidArgument, store->Describe(),
                      resource, "permits must be at least 1");
  }
  if (options.permits > 1 && !store->capabilities().counting) {
    return StoreError(absl::StatusCode::kInvalidArgument, store->Describe(),
                      resource,
                      absl::StrCat("permits=", options.permits,
                                   " needs a counting store (semaphore, "
                                   "posix-semaphore, in-memory)"));
  }
  key->set_permits(options.permits);
  return Lock(std::move(store), *std::move(key), options);
}

Lock::Lock(std::shared_ptr<Store> store, Key key, const LockOptions& options,
           bool acquired)
    : store_(std::move(store)),
      key_(std::move(key)),
      options_(options),
      acquired_(acquired) {
  // Read once: a store's capabilities are fixed for its life, and the hot
  // path should not pay a virtual call per check.
  if (store_ != nullptr) caps_ = store_->capabilities();
}

Lock::Lock(Lock&& other) noexcept
    : store_(std::move(other.store_)),
      key_(std::move(other.key_)),
      options_(other.options_),
      mode_(other.mode_),
      caps_(other.caps_),
      acquired_(std::exchange(other.acquired_, false)) {}

Lock& Lock::operator=(Lock&& other) noexcept {
  if (this != &other) {
    if (acquired_ && options_.auto_release) Release().IgnoreError();
    store_ = std::move(other.store_);
    key_ = std::move(other.key_);
    options_ = other.options_;
    caps_ = other.caps_;
    mode_ = other.mode_;
    acquired_ = std::exchange(other.acquired_, false);
  }
  return *this;
}

Lock::~Lock() {
  if (acquired_ && options_.auto_release && store_ != nullptr) {
    Release().IgnoreError();
  }
}

absl::Status Lock::CheckMode(LockMode mode) const {
  if (store_ == nullptr) {
    return absl::FailedPreconditionError("ipclock: use of a moved-from Lock");
  }
  if (mode == LockMode::kShared && !caps_.shared) {
    return StoreError(absl::StatusCode::kFailedPrecondition, store_->Describe(),
                      key_.resource(), "this store has no shared locks");
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Lock::AcquireUntil(Deadline deadline, LockMode mode) {
  if (absl::Status s = CheckMode(mode); !s.ok()) return s;
  const bool expiring = caps_.expiring;
  if (expiring) {
    key_.ResetLifetime();
    key_.ReduceLifetime(options_.ttl);
  }
  absl::StatusOr<bool> saved = store_->Save(key_, mode, deadline);
  if (!saved.ok()) return saved.status();
  if (!*saved) {
    // A failed conversion may have cost the lock we held (flock drops a
    // shared lock before it queues for an exclusive one): ask the store.
    if (acquired_) {
      absl::StatusOr<bool> still = store_->Exists(key_);
      acquired_ = still.ok() && *still;
    }
    return false;
  }
  acquired_ = true;
  mode_ = mode;
  if (expiring && key_.IsExpired()) {
    absl::Status released = DeleteFromStore();
    return StoreError(absl::StatusCode::kAborted, store_->Describe(),
                      key_.resource(),
                      absl::StrCat("the lease (ttl ",
                                   absl::FormatDuration(options_.ttl),
                                   ") ran out before the lock was acquired",
                                   released.ok() ? "" : "; release failed: ",
                                   released.ok() ? "" : released.message()));
  }
  return true;
}

absl::StatusOr<bool> Lock::TryAcquire(LockMode mode) {
  return AcquireUntil(Deadline::Past(), mode);
}

absl::Status Lock::Acquire(absl::Duration timeout, LockMode mode) {
  absl::StatusOr<bool> got = AcquireUntil(Deadline::In(timeout), mode);
  if (!got.ok()) return got.status();
  if (*got) return absl::OkStatus();
  return StoreError(absl::StatusCode::kDeadlineExceeded, store_->Describe(),
                    key_.resource(),
                    absl::StrCat("still held by another owner after ",
                                 absl::FormatDuration(timeout)));
}

absl::Status Lock::Refresh(std::optional<absl::Duration> ttl) {
  if (store_ == nullptr) {
    return absl::FailedPreconditionError("ipclock: use of a moved-from Lock");
  }
  if (!caps_.expiring) return absl::OkStatus();
  absl::Duration lease = ttl.value_or(options_.ttl);
  key_.ResetLifetime();
  key_.ReduceLifetime(lease);
  if (absl::Status s = store_->PutOffExpiration(key_, lease); !s.ok()) {
    return s;
  }
  if (key_.IsExpired()) {
    return StoreError(absl::StatusCode::kAborted, store_->Describe(),
                      key_.resource(),
                      absl::StrCat("the lease ran out during refresh (ttl ",
                                   absl::FormatDuration(lease), ")"));
  }
  return absl::OkStatus();
}

absl::Status Lock::Release() {
  if (!acquired_ || store_ == nullptr) return absl::OkStatus();
  // Measured before the store is asked, and reported only after it released
  // the lock: the lock goes either way, and a second Release() finds it
  // released, so each lock is reported once.
  const absl::Duration overrun = key_.ExpiredFor();
  absl::Status s = DeleteFromStore();
  if (overrun <= absl::ZeroDuration()) return s;
  absl::Status reported = ReportLeaseOverrun(store_->Describe(), key_.resource(),
                                             options_.ttl, overrun);
  return s.ok() ? reported : s;
}

absl::Status Lock::DeleteFromStore() {
  absl::Status s = store_->Delete(key_);
  // A failed release still ends this object's claim: the store's error says
  // what state the lock is in.
  acquired_ = false;
  return s;
}

absl::StatusOr<bool> Lock::CheckAcquired() {
  if (store_ == nullptr) return false;
  if (!acquired_) return false;
  absl::StatusOr<bool> held = store_->Exists(key_);
  if (held.ok() && !*held) {
    // Lost to us (a lock file or semaphore deleted under it, a lease run
    // out), but the store may still hold the kernel object it locked, and
    // processes that opened that object before the deletion wait on it:
    // let it go now, not at destruction (or, for a POSIX semaphore's
    // permit, at process exit). Delete touches nothing that is not ours.
    DeleteFromStore().IgnoreError();
  }
  return held;
}

}  // namespace ipclock
