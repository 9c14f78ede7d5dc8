// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// WatchedLock and LockWatch over a WatchCore (watch_core.h), which watches.

#include "ipclock/lock_watch.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/lock_access.h"
#include "core/watch_core.h"
#include "core/watch_entry.h"
#include "core/watch_report.h"
#include "platform/errors.h"
#include "platform/process_id.h"

namespace ipclock {

// --- WatchedLock -----------------------------------------------------------------

WatchedLock::WatchedLock(std::shared_ptr<internal::WatchEntry> entry,
                         std::shared_ptr<internal::WatchCore> core)
    : entry_(std::move(entry)), core_(std::move(core)) {}

WatchedLock::WatchedLock(WatchedLock&&) noexcept = default;

WatchedLock& WatchedLock::operator=(WatchedLock&& other) noexcept {
  if (this != &other) {
    Finish();  // the Lock it held is destroyed, and released, here
    entry_ = std::move(other.entry_);
    core_ = std::move(other.core_);
  }
  return *this;
}

WatchedLock::~WatchedLock() { Finish(); }

namespace {

// The entry's mutex `mu`, but not in a fork()ed child's copy of the entry
// (WatchEntry::owner says why).
std::unique_lock<std::mutex> EntryTurn(const internal::WatchEntry& entry, std::mutex& mu) {
  if (entry.owner != CurrentPid()) return std::unique_lock<std::mutex>(mu, std::defer_lock);
  return std::unique_lock<std::mutex>(mu);
}

}  // namespace

std::optional<Lock> WatchedLock::Finish(absl::Status* found_lost) {
  if (entry_ == nullptr) return std::nullopt;
  if (entry_->owner != CurrentPid()) {
    // A fork()ed child's copy: the child's watch never had it, and its
    // reports are the parent's. The Lock, a child's copy too, lets go of
    // nothing the parent holds (Lock::Release()).
    std::optional<Lock> lock;
    lock.swap(entry_->lock);
    if (found_lost != nullptr && entry_->lost) *found_lost = entry_->error;
    entry_.reset();
    core_.reset();
    return lock;
  }
  // Out of the watch first, so that no check starts on a lock being released.
  core_->Remove(entry_.get());
  std::optional<Lock> lock;
  {
    // Waits for a check under way; none starts after this (no Lock left).
    std::lock_guard<std::mutex> guard(entry_->mu);
    lock.swap(entry_->lock);
  }
  {
    // Waits for a report under way, and delivers one found but not yet
    // delivered; none runs after this.
    std::unique_lock<std::mutex> turn = internal::ReportTurn(*entry_);
    internal::DeliverLocked(*entry_);
    entry_->finished = true;
  }
  if (found_lost != nullptr) {
    std::lock_guard<std::mutex> guard(entry_->state_mu);
    if (entry_->lost) *found_lost = entry_->error;
  }
  entry_.reset();
  core_.reset();
  return lock;
}

bool WatchedLock::lost() const {
  if (entry_ == nullptr) return false;
  std::unique_lock<std::mutex> guard = EntryTurn(*entry_, entry_->state_mu);
  return entry_->lost;
}

absl::Status WatchedLock::status() const {
  if (entry_ == nullptr) return absl::OkStatus();
  std::unique_lock<std::mutex> guard = EntryTurn(*entry_, entry_->state_mu);
  return entry_->error;
}

absl::Status WatchedLock::CheckNow() {
  if (entry_ == nullptr) {
    return absl::FailedPreconditionError(
        "ipclock: WatchedLock::CheckNow on a moved-from WatchedLock");
  }
  if (entry_->owner != CurrentPid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ipclock: WatchedLock::CheckNow: resource ", QuoteResource(entry_->resource),
        ": the lock is watched by process ", entry_->owner,
        "; this fork()ed child's copy is not watched (Take() it and check the Lock)"));
  }
  // The sink of a loss found here runs inside this call and may release
  // this WatchedLock, which drops entry_ and core_: the call keeps its own.
  const std::shared_ptr<internal::WatchEntry> entry = entry_;
  const std::shared_ptr<internal::WatchCore> core = core_;
  return core->CheckNow(*entry);
}

absl::Status WatchedLock::Release() {
  absl::Status found_lost;
  std::optional<Lock> lock = Finish(&found_lost);
  if (!lock) {
    return absl::FailedPreconditionError(
        "ipclock: WatchedLock::Release on a lock already released, taken back "
        "or moved from");
  }
  absl::Status released = lock->Release();
  // The store may no longer see the loss the watch found (a check skipped
  // as too recent, a lock dir re-created since): the watch's word stands.
  if (released.ok() && !found_lost.ok()) return found_lost;
  return released;
}

absl::StatusOr<Lock> WatchedLock::Take() {
  std::optional<Lock> lock = Finish();
  if (!lock) {
    return absl::FailedPreconditionError(
        "ipclock: WatchedLock::Take on a lock already released, taken back or "
        "moved from");
  }
  return *std::move(lock);
}

std::optional<uint64_t> WatchedLock::fence() const {
  if (entry_ == nullptr) return std::nullopt;
  return entry_->fence;
}

absl::Duration WatchedLock::RemainingLifetime() const {
  if (entry_ == nullptr) return absl::ZeroDuration();
  std::unique_lock<std::mutex> guard = EntryTurn(*entry_, entry_->state_mu);
  if (entry_->lost) return absl::ZeroDuration();
  if (entry_->lease_end == internal::kNever) return absl::InfiniteDuration();
  return absl::Nanoseconds(std::max<int64_t>(0, entry_->lease_end - internal::Now()));
}

// --- LockWatch -------------------------------------------------------------------

LockWatch& LockWatch::Default() {
  static LockWatch* watch = new LockWatch();
  return *watch;
}

LockWatch::LockWatch() : core_(std::make_shared<internal::WatchCore>()) {}

LockWatch::~LockWatch() { core_->Stop(); }

absl::StatusOr<WatchedLock> LockWatch::Watch(Lock&& lock, const WatchOptions& options) {
  // Checked before the Lock is touched: a refusal leaves it with the caller,
  // held, its LockGuard (if any) still in charge.
  if (!lock.is_acquired()) {
    return absl::FailedPreconditionError(
        absl::StrCat("ipclock: LockWatch::Watch: resource ",
                     QuoteResource(lock.resource()), ": the lock is not held"));
  }
  if (options.check_interval < absl::Milliseconds(1) ||
      options.check_interval > kMaxCheckInterval) {
    return absl::InvalidArgumentError(
        absl::StrCat("ipclock: LockWatch::Watch: check_interval ",
                     absl::FormatDuration(options.check_interval),
                     options.check_interval < absl::Milliseconds(1)
                         ? " is below 1ms"
                         : absl::StrCat(" is above ", absl::FormatDuration(kMaxCheckInterval))));
  }
  auto entry = std::make_shared<internal::WatchEntry>(std::move(lock), options);
  entry->interval_nanos = absl::ToInt64Nanoseconds(options.check_interval);
  if (absl::Status s = core_->Add(entry); !s.ok()) {
    lock = *std::move(entry->lock);  // not watched: the caller's again
    return s;
  }
  // The watch owns the release from now on: a LockGuard on the lock would
  // release it behind the watch's back.
  internal::LockAccess::DetachGuard(*entry->lock);
  return WatchedLock(std::move(entry), core_);
}

}  // namespace ipclock
