// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/lock.h"

#include <algorithm>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "core/capability_flags.h"
#include "core/diagnostics.h"
#include "core/metrics.h"
#include "platform/errors.h"
#include "platform/process_id.h"
#include "ipclock/lock_factory.h"
#include "ipclock/lock_guard.h"
#include "ipclock/spi/store_interface.h"

namespace ipclock {

absl::StatusOr<Lock> Lock::Create(std::shared_ptr<Store> store,
                                  absl::string_view resource,
                                  const LockOptions& options) {
  if (store == nullptr) {
    return absl::InvalidArgumentError("ipclock: Lock::Create with a null store");
  }
  absl::StatusOr<Key> key = Key::Create(resource, options.key_options);
  if (!key.ok()) return key.status();
  const Capabilities caps = store->capabilities();
  if (options.permits == 0 || (options.permits > 1 && !caps.counting)) {
    return StoreError(
        absl::StatusCode::kInvalidArgument, store->Describe(), resource,
        options.permits == 0
            ? "permits must be at least 1"
            : absl::StrCat("permits=", options.permits,
                           " needs a counting store (semaphore, "
                           "posix-semaphore, in-memory)"));
  }
  if (std::string problem = WeightProblem(options.permits, options.weight, caps);
      !problem.empty()) {
    return StoreError(absl::StatusCode::kInvalidArgument, store->Describe(), resource, problem);
  }
  if (absl::Status s = CheckLeaseFits(caps, options.ttl); !s.ok()) {
    return StoreError(s.code(), store->Describe(), resource, s.message());
  }
  if (caps.expiring && options.ttl <= absl::ZeroDuration()) {
    return StoreError(absl::StatusCode::kInvalidArgument, store->Describe(),
                      resource,
                      absl::StrCat("this store's locks expire: the ttl must be "
                                   "positive, not ",
                                   absl::FormatDuration(options.ttl)));
  }
  KeyWriter(*key).set_permits(options.permits);
  KeyWriter(*key).set_weight(options.weight);
  return Lock(std::move(store), *std::move(key), options);
}

absl::StatusOr<Lock> Lock::FromSerialized(std::shared_ptr<Store> store,
                                          absl::string_view text,
                                          const LockOptions& options) {
  if (store == nullptr) {
    return absl::InvalidArgumentError(
        "ipclock: Lock::FromSerialized with a null store");
  }
  if (!store->capabilities().serializable) {
    return StoreError(absl::StatusCode::kFailedPrecondition, store->Describe(),
                      "", "this store's locks cannot be handed to another "
                          "process (it is not serializable)");
  }
  absl::StatusOr<Key> key = Key::Deserialize(text, options.key_options);
  if (!key.ok()) return key.status();
  KeyWriter(*key).set_permits(options.permits);
  Lock lock(std::move(store), *std::move(key), options);
  absl::StatusOr<bool> held = StoreCalls::IsHeld(*lock.store_, *lock.key_);
  if (!held.ok()) return held.status();
  if (!*held) {
    return StoreError(absl::StatusCode::kAborted, lock.store_->Describe(),
                      lock.key_->resource(),
                      "the serialized lock is no longer held (released, or "
                      "its lease ran out)");
  }
  lock.acquired_ = true;
  lock.holder_pid_ = CurrentPid();
  return lock;
}

Lock::Lock(std::shared_ptr<Store> store, Key key, const LockOptions& options)
    : store_(std::move(store)), key_(std::make_unique<Key>(std::move(key))), options_(options) {
  // Read once: a store's capabilities are fixed for its life, and the hot
  // path should not pay a virtual call per check.
  caps_ = store_->capabilities();
  // A serializable lock also checks, on release, that this is not a forked
  // child's copy (IsForkedCopy()).
  fast_path_ = !caps_.expiring && !caps_.serializable;
  metrics_ = internal::ClaimMetricsCell(*store_, key_->resource());
  KeyWriter(*key_).set_canceller(options_.canceller.get());
}

Lock::Lock(Lock&& other) noexcept
    : store_(std::move(other.store_)),
      key_(std::move(other.key_)),
      options_(other.options_),
      mode_(other.mode_),
      caps_(other.caps_),
      fast_path_(std::exchange(other.fast_path_, false)),
      acquired_(std::exchange(other.acquired_, false)),
      holder_pid_(other.holder_pid_),
      guard_(std::exchange(other.guard_, nullptr)),
      metrics_(std::exchange(other.metrics_, nullptr)),
      held_since_(std::exchange(other.held_since_, 0)),
      loss_counted_(other.loss_counted_) {
  // The guard follows the acquisition it holds.
  if (guard_ != nullptr) guard_->lock_ = this;
}

Lock& Lock::operator=(Lock&& other) noexcept {
  if (this != &other) {
    // What this Lock held ends here, and its guard with it.
    DetachGuard();
    if (acquired_ && options_.auto_release) Release().IgnoreError();
    internal::ReleaseMetricsCell(metrics_);
    metrics_ = std::exchange(other.metrics_, nullptr);
    held_since_ = std::exchange(other.held_since_, 0);
    loss_counted_ = other.loss_counted_;
    store_ = std::move(other.store_);
    key_ = std::move(other.key_);
    options_ = other.options_;
    caps_ = other.caps_;
    mode_ = other.mode_;
    fast_path_ = std::exchange(other.fast_path_, false);
    acquired_ = std::exchange(other.acquired_, false);
    holder_pid_ = other.holder_pid_;
    guard_ = std::exchange(other.guard_, nullptr);
    if (guard_ != nullptr) guard_->lock_ = this;
  }
  return *this;
}

Lock::~Lock() {
  DetachGuard();
  if (acquired_ && options_.auto_release && store_ != nullptr) {
    Release().IgnoreError();
  }
  internal::ReleaseMetricsCell(metrics_);
}

void Lock::DetachGuard() {
  if (guard_ != nullptr) std::exchange(guard_, nullptr)->lock_ = nullptr;
}

absl::StatusOr<bool> Lock::AcquireFromStoreUntil(Deadline deadline, LockMode mode) {
  const Canceller* canceller = options_.canceller.get();
  if (canceller == nullptr || caps_.cancellable || deadline.has_passed()) {
    return StoreCalls::Acquire(*store_, caps_, *key_, mode, deadline);
  }
  // The store's wait does not watch the canceller: it waits in slices, and
  // looks between them. Each slice asks for the whole lease again.
  for (bool first = true;; first = false) {
    if (!first && caps_.expiring) {
      KeyWriter(*key_).ResetLifetime();
      KeyWriter(*key_).ReduceLifetime(options_.ttl);
    }
    const Deadline slice = std::min(deadline, Deadline::In(kCancelSlice));
    absl::StatusOr<bool> saved = StoreCalls::Acquire(*store_, caps_, *key_, mode, slice);
    KeyWriter(*key_).set_tried_just_now(false);  // only the first slice follows the try
    if (!saved.ok() || *saved || slice == deadline || canceller->cancelled()) return saved;
  }
}

absl::Status Lock::CancelledError() const {
  return StoreError(absl::StatusCode::kCancelled, store_->Describe(), key_->resource(),
                    "the wait was cancelled (Canceller::Cancel())");
}

absl::StatusOr<bool> Lock::AcquireUntil(Deadline deadline, LockMode mode) {
  if (store_ == nullptr) {
    return absl::FailedPreconditionError("ipclock: use of a moved-from Lock");
  }
  // A wait, not a try, ends before it begins once cancelled.
  const bool cancellable = options_.canceller != nullptr && !deadline.has_passed();
  if (cancellable && options_.canceller->cancelled()) return CancelledError();
  const bool expiring = caps_.expiring;
  // A conversion that fails leaves the store's lease as it was, so the key's
  // must stay as it was too.
  const std::optional<Deadline> previous_expiry = key_->expiry();
  if (expiring) {
    KeyWriter(*key_).ResetLifetime();
    KeyWriter(*key_).ReduceLifetime(options_.ttl);
  }
  // With metrics or an `on_wait`, a wait starts with a try, so that an
  // acquisition that found the lock free is told from one that waited (and
  // costs no clock read). The store's wait is then told that the try was
  // just made (Key::tried_just_now()), so that a contended acquisition
  // tries once and blocks, rather than trying again first. A try that met a
  // transient fault (a server between connections) has had no time to try
  // again: the wait, with its whole deadline, does.
  bool waited = false;
  int64_t wait_began = 0;
  absl::StatusOr<bool> saved;
  if ((metrics_ != nullptr || options_.on_wait) && !acquired_ && !deadline.has_passed()) {
    saved = StoreCalls::Acquire(*store_, caps_, *key_, mode, Deadline::Past());
    const bool busy = saved.ok() && !*saved;
    if (busy || absl::IsUnavailable(saved.status())) {
      waited = true;
      if (metrics_ != nullptr) wait_began = internal::MetricsNowNanos();
      if (busy && options_.on_wait) options_.on_wait(*this);
      KeyWriter(*key_).set_tried_just_now(busy);
      saved = AcquireFromStoreUntil(deadline, mode);
      KeyWriter(*key_).set_tried_just_now(false);
    }
  } else {
    saved = AcquireFromStoreUntil(deadline, mode);
  }
  if (!saved.ok() || !*saved) {
    if (expiring) KeyWriter(*key_).set_expiry(previous_expiry);
    if (!saved.ok()) return saved.status();
    const bool cancelled = cancellable && options_.canceller->cancelled();
    if (metrics_ != nullptr && !cancelled) internal::Bump(metrics_->timeouts);
    // A failed conversion may have cost the lock we held (flock drops a
    // shared lock before it queues for an exclusive one): ask the store.
    if (acquired_) {
      absl::StatusOr<bool> still = StoreCalls::IsHeld(*store_, *key_);
      acquired_ = still.ok() && *still;
    }
    if (cancelled) return CancelledError();
    return false;
  }
  const bool converted = acquired_;
  acquired_ = true;
  holder_pid_ = CurrentPid();
  mode_ = mode;
  if (metrics_ != nullptr && !converted) {
    loss_counted_ = false;
    if (!waited) {
      held_since_ = metrics_->AcquiredAtOnce(key_->previous_owner_died(), /*sampled_path=*/false);
    } else {
      held_since_ = internal::MetricsNowNanos();
      internal::Bump(metrics_->acquisitions);
      internal::Bump(metrics_->contended);
      metrics_->wait.Observe(held_since_ - wait_began);
      if (key_->previous_owner_died()) internal::Bump(metrics_->owner_deaths);
    }
  }
  if (expiring && key_->IsExpired()) {
    absl::Status released = DeleteFromStore();
    return StoreError(absl::StatusCode::kAborted, store_->Describe(),
                      key_->resource(),
                      absl::StrCat("the lease (ttl ",
                                   absl::FormatDuration(options_.ttl),
                                   ") ran out before the lock was acquired",
                                   released.ok() ? "" : "; release failed: ",
                                   released.ok() ? "" : released.message()));
  }
  return true;
}

absl::Status Lock::BusyError(absl::Duration timeout) const {
  return StoreError(absl::StatusCode::kDeadlineExceeded, store_->Describe(),
                    key_->resource(),
                    absl::StrCat("still held by another owner after ",
                                 absl::FormatDuration(timeout)));
}

absl::StatusOr<bool> Lock::TryAcquire(LockMode mode) {
  // The reused handle's path: no lease to set, no conversion to undo, and
  // the checks of StoreCalls::Acquire() made when the Lock was created.
  if (ABSL_PREDICT_TRUE(fast_path_ && !acquired_ && mode == LockMode::kExclusive)) {
    absl::StatusOr<bool> got = StoreCalls::TryAcquireExclusive(*store_, *key_);
    if (ABSL_PREDICT_FALSE(!got.ok())) return StoreCalls::AsAcquireError(got.status());
    if (*got) {
      acquired_ = true;
      mode_ = mode;
      if (metrics_ != nullptr) {
        loss_counted_ = false;
        held_since_ = metrics_->AcquiredAtOnce(key_->previous_owner_died(), /*sampled_path=*/true);
      }
    } else if (metrics_ != nullptr) {
      internal::Bump(metrics_->timeouts);
    }
    return got;
  }
  return AcquireUntil(Deadline::Past(), mode);
}

absl::StatusOr<bool> Lock::TryAcquireFor(absl::Duration timeout, LockMode mode) {
  return AcquireUntil(Deadline::In(timeout), mode);
}

absl::Status Lock::Acquire(absl::Duration timeout, LockMode mode) {
  absl::StatusOr<bool> got = AcquireUntil(Deadline::In(timeout), mode);
  if (!got.ok()) return got.status();
  if (*got) return absl::OkStatus();
  return BusyError(timeout);
}

absl::Status Lock::Refresh(std::optional<absl::Duration> ttl) {
  if (store_ == nullptr) {
    return absl::FailedPreconditionError("ipclock: use of a moved-from Lock");
  }
  if (!caps_.expiring) return absl::OkStatus();
  if (!acquired_) {
    return StoreError(absl::StatusCode::kFailedPrecondition, store_->Describe(),
                      key_->resource(), "cannot refresh a lock that is not held");
  }
  if (IsForkedCopy()) return ForkedCopyError();
  absl::Duration lease = ttl.value_or(options_.ttl);
  const std::optional<Deadline> previous_expiry = key_->expiry();
  KeyWriter(*key_).ResetLifetime();
  KeyWriter(*key_).ReduceLifetime(lease);
  if (absl::Status s = StoreCalls::Extend(*store_, *key_, lease);
      !s.ok()) {
    // The store's lease is what it was (or gone): so is ours.
    KeyWriter(*key_).set_expiry(previous_expiry);
    return s;
  }
  if (key_->IsExpired()) {
    return StoreError(absl::StatusCode::kAborted, store_->Describe(),
                      key_->resource(),
                      absl::StrCat("the lease ran out during refresh (ttl ",
                                   absl::FormatDuration(lease), ")"));
  }
  return absl::OkStatus();
}

absl::Status Lock::Release() {
  if (!acquired_ || store_ == nullptr) return absl::OkStatus();
  // Without a lease there is no overrun to report.
  if (ABSL_PREDICT_TRUE(fast_path_)) return DeleteFromStore();
  return ReleaseFully();
}

// Only serializable stores need this: the others tell a forked child from
// its parent themselves (their locks are the process's descriptors, undo
// records or mutex owner ids), while a token releases a lock for anyone.
bool Lock::IsForkedCopy() const {
  return caps_.serializable && holder_pid_ != CurrentPid();
}

absl::Status Lock::ForkedCopyError() const {
  return StoreError(absl::StatusCode::kFailedPrecondition, store_->Describe(),
                    key_->resource(),
                    absl::StrCat("the lock is held by process ", holder_pid_,
                                 ", which acquired it; this fork()ed child's copy "
                                 "neither releases nor uses it"));
}

absl::Status Lock::ReleaseAsDead() {
  if (!acquired_ || store_ == nullptr) return absl::OkStatus();
  if (IsForkedCopy()) {
    acquired_ = false;
    return ForkedCopyError();
  }
  absl::Status s = StoreCalls::ReleaseAsDead(*store_, *key_);
  acquired_ = false;
  return s;
}

absl::Status Lock::ReleaseFully() {
  if (IsForkedCopy()) {
    acquired_ = false;
    return ForkedCopyError();
  }
  // Measured before the store is asked, and reported only after it released
  // the lock: the lock goes either way, and a second Release() finds it
  // released, so each lock is reported once.
  const absl::Duration overrun = key_->ExpiredFor();
  absl::Status s = DeleteFromStore();
  if (overrun <= absl::ZeroDuration()) return s;
  NoteLost();
  absl::Status reported = ReportLeaseOverrun(*store_, key_->resource(), options_.ttl, overrun);
  // The store may have found the lock gone (Aborted too): the overrun says
  // more about why.
  return s.ok() || absl::IsAborted(s) ? reported : s;
}

absl::Status Lock::DeleteFromStore() {
  absl::Status s = StoreCalls::Release(*store_, *key_);
  // A failed release still ends this object's claim: the store's error says
  // what state the lock is in.
  acquired_ = false;
  if (metrics_ != nullptr && (held_since_ != 0 || !s.ok())) RecordRelease(s);
  return s;
}

void Lock::RecordRelease(const absl::Status& released) {
  if (held_since_ != 0) {
    metrics_->hold.Observe(internal::MetricsNowNanos() - held_since_);
    held_since_ = 0;
  }
  if (absl::IsAborted(released)) NoteLost();
}

void Lock::NoteLost() {
  if (metrics_ == nullptr || loss_counted_) return;
  loss_counted_ = true;
  internal::Bump(metrics_->losses);
}

absl::Status Lock::CheckAcquired() {
  if (store_ == nullptr) {
    return absl::FailedPreconditionError("ipclock: use of a moved-from Lock");
  }
  if (!acquired_) {
    return StoreError(absl::StatusCode::kFailedPrecondition, store_->Describe(),
                      key_->resource(), "the lock is not acquired");
  }
  if (IsForkedCopy()) return ForkedCopyError();
  absl::Status held = StoreCalls::CheckHeld(*store_, *key_);
  if (held.code() == absl::StatusCode::kAborted) {
    NoteLost();
    // Lost to us, but the store may still have the kernel object it locked,
    // and processes that opened that object before it was deleted wait on
    // it: let it go now, not at destruction. The store's own report of the
    // release (Aborted again) adds nothing to `held`.
    DeleteFromStore().IgnoreError();
  }
  return held;
}

const std::string& Lock::resource() const {
  static const std::string* const kNone = new std::string();
  return key_ ? key_->resource() : *kNone;
}

bool Lock::IsExpired() const { return key_ && key_->IsExpired(); }

absl::Duration Lock::RemainingLifetime() const {
  return key_ ? key_->RemainingLifetime() : absl::ZeroDuration();
}

std::optional<uint64_t> Lock::fence() const {
  return key_ ? key_->fence() : std::nullopt;
}

bool Lock::previous_owner_died() const { return key_ && key_->previous_owner_died(); }

std::vector<uint32_t> Lock::slots() const {
  if (!key_) return {};
  return std::vector<uint32_t>(key_->slots().begin(), key_->slots().end());
}

absl::StatusOr<std::string> Lock::Serialize() {
  if (store_ == nullptr) {
    return absl::FailedPreconditionError("ipclock: use of a moved-from Lock");
  }
  if (!caps_.serializable || !key_->serializable()) {
    return StoreError(absl::StatusCode::kFailedPrecondition, store_->Describe(),
                      key_->resource(),
                      "this store's locks are tied to the process holding "
                      "them and cannot be serialized");
  }
  if (!acquired_) {
    return StoreError(absl::StatusCode::kFailedPrecondition, store_->Describe(),
                      key_->resource(), "only a held lock can be serialized");
  }
  return key_->Serialize();
}

absl::StatusOr<Lock> AcquireLock(std::shared_ptr<Store> store,
                                 absl::string_view resource,
                                 absl::Duration timeout, LockMode mode,
                                 const LockOptions& options) {
  absl::StatusOr<Lock> lock = Lock::Create(std::move(store), resource, options);
  if (!lock.ok()) return lock.status();
  if (absl::Status s = lock->Acquire(timeout, mode); !s.ok()) return s;
  return lock;
}

}  // namespace ipclock
