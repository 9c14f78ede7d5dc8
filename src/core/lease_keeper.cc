// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// One thread per keeper sleeps until the earliest refresh that is due, then
// refreshes the due locks one by one. Each kept Lock sits in an entry with
// its own mutex, which the thread holds while it refreshes and the owner's
// KeptLock holds for every call: a slow refresh of one lock (a server
// timeout) delays the owner of that lock only, never a KeptLock call on
// another one.

#include "ipclock/lease_keeper.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace ipclock {
namespace internal {

constexpr int64_t kNever = INT64_MAX;

struct KeptEntry {
  explicit KeptEntry(Lock l) : lock(std::move(l)) {}

  std::mutex mu;  // the owner's calls and the keeper's refreshes take turns
  std::optional<Lock> lock;  // empty once released or taken back
  absl::Status error;        // guarded by mu
  bool lost = false;         // guarded by mu
  // When the next refresh is due (CLOCK_MONOTONIC ns); kNever when the lock
  // is done, lost, or has no lease. Read by the thread without `mu`.
  std::atomic<int64_t> due_nanos{kNever};
};

struct KeeperCore {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;          // guarded by mu
  bool started = false;       // guarded by mu
  std::vector<std::shared_ptr<KeptEntry>> entries;  // guarded by mu
  LeaseKeeperOptions options;

  void Wake() {
    std::lock_guard<std::mutex> guard(mu);
    cv.notify_all();
  }
};

namespace {

// A third of the lease: two refreshes may fail or be late before it runs
// out. Counted from now, on the shorter of the TTL and what is left.
int64_t NextDue(const Lock& lock) {
  if (!lock.store().capabilities().expiring) return kNever;
  absl::Duration lease = std::min(lock.options().ttl, lock.RemainingLifetime());
  if (lease == absl::InfiniteDuration()) return kNever;
  return Deadline::NowNanos() + absl::ToInt64Nanoseconds(lease / 3);
}

std::chrono::steady_clock::time_point ToSteady(int64_t nanos) {
  // libstdc++'s steady_clock reads CLOCK_MONOTONIC, the clock of Deadline.
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(nanos));
}

// Refreshes `e` if it is due. Returns what the on_lost callback is to be
// told, if this refresh lost the lock.
std::optional<LostLease> RefreshIfDue(KeptEntry& e) {
  std::lock_guard<std::mutex> guard(e.mu);
  if (!e.lock || e.lost) return std::nullopt;
  if (e.due_nanos.load() > Deadline::NowNanos()) return std::nullopt;
  absl::Status s = e.lock->Refresh();
  if (s.ok()) {
    e.due_nanos.store(NextDue(*e.lock));
    return std::nullopt;
  }
  e.lost = true;
  e.error = s;
  e.due_nanos.store(kNever);
  return LostLease{e.lock->store().Describe(), e.lock->resource(), s};
}

void Run(KeeperCore* core) {
  std::unique_lock<std::mutex> guard(core->mu);
  while (!core->stop) {
    int64_t earliest = kNever;
    std::vector<std::shared_ptr<KeptEntry>> due;
    const int64_t now = Deadline::NowNanos();
    for (const std::shared_ptr<KeptEntry>& e : core->entries) {
      const int64_t at = e->due_nanos.load();
      if (at <= now) {
        due.push_back(e);
      } else {
        earliest = std::min(earliest, at);
      }
    }
    if (due.empty()) {
      if (earliest == kNever) {
        core->cv.wait(guard);
      } else {
        core->cv.wait_until(guard, ToSteady(earliest));
      }
      // Entries whose KeptLock is done (due_nanos kNever, lock gone) are
      // dropped here rather than by the owner, who may not take core->mu
      // while a refresh runs.
      core->entries.erase(
          std::remove_if(core->entries.begin(), core->entries.end(),
                         [](const std::shared_ptr<KeptEntry>& e) {
                           return e.use_count() == 1;
                         }),
          core->entries.end());
      continue;
    }
    guard.unlock();
    for (const std::shared_ptr<KeptEntry>& e : due) {
      std::optional<LostLease> lost = RefreshIfDue(*e);
      if (lost && core->options.on_lost) core->options.on_lost(*lost);
    }
    guard.lock();
  }
}

}  // namespace
}  // namespace internal

// --- KeptLock ------------------------------------------------------------------

KeptLock::KeptLock(std::shared_ptr<internal::KeptEntry> entry,
                   std::shared_ptr<internal::KeeperCore> core)
    : entry_(std::move(entry)), core_(std::move(core)) {}

KeptLock::KeptLock(KeptLock&&) noexcept = default;

KeptLock& KeptLock::operator=(KeptLock&& other) noexcept {
  if (this != &other) {
    Finish();  // the Lock it held is destroyed, and released, here
    entry_ = std::move(other.entry_);
    core_ = std::move(other.core_);
  }
  return *this;
}

KeptLock::~KeptLock() { Finish(); }

std::optional<Lock> KeptLock::Finish() {
  if (entry_ == nullptr) return std::nullopt;
  std::optional<Lock> lock;
  {
    std::lock_guard<std::mutex> guard(entry_->mu);
    lock.swap(entry_->lock);
    entry_->due_nanos.store(internal::kNever);
  }
  entry_.reset();
  core_->Wake();  // lets the thread drop the entry
  core_.reset();
  return lock;
}

bool KeptLock::lost() const {
  if (entry_ == nullptr) return false;
  std::lock_guard<std::mutex> guard(entry_->mu);
  return entry_->lost;
}

absl::Status KeptLock::status() const {
  if (entry_ == nullptr) return absl::OkStatus();
  std::lock_guard<std::mutex> guard(entry_->mu);
  return entry_->error;
}

absl::Status KeptLock::Release() {
  std::optional<Lock> lock = Finish();
  if (!lock) {
    return absl::FailedPreconditionError(
        "ipclock: KeptLock::Release on a lock already released, taken back "
        "or moved from");
  }
  return lock->Release();
}

absl::StatusOr<Lock> KeptLock::Take() {
  std::optional<Lock> lock = Finish();
  if (!lock) {
    return absl::FailedPreconditionError(
        "ipclock: KeptLock::Take on a lock already released, taken back or "
        "moved from");
  }
  return *std::move(lock);
}

std::optional<uint64_t> KeptLock::fence() const {
  if (entry_ == nullptr) return std::nullopt;
  std::lock_guard<std::mutex> guard(entry_->mu);
  return entry_->lock ? entry_->lock->fence() : std::nullopt;
}

absl::Duration KeptLock::RemainingLifetime() const {
  if (entry_ == nullptr) return absl::ZeroDuration();
  std::lock_guard<std::mutex> guard(entry_->mu);
  return entry_->lock ? entry_->lock->RemainingLifetime() : absl::ZeroDuration();
}

// --- LeaseKeeper ---------------------------------------------------------------

LeaseKeeper::LeaseKeeper(LeaseKeeperOptions options)
    : core_(std::make_shared<internal::KeeperCore>()) {
  core_->options = std::move(options);
}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard<std::mutex> guard(core_->mu);
    core_->stop = true;
    core_->cv.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

absl::StatusOr<KeptLock> LeaseKeeper::Keep(Lock lock) {
  if (!lock.is_acquired()) {
    // Not StoreError(): a moved-from Lock has no store to name.
    return absl::FailedPreconditionError(
        absl::StrCat("ipclock: LeaseKeeper::Keep: resource ",
                     QuoteResource(lock.resource()),
                     ": the lock is not held"));
  }
  auto entry = std::make_shared<internal::KeptEntry>(std::move(lock));
  entry->due_nanos.store(internal::NextDue(*entry->lock));
  {
    std::lock_guard<std::mutex> guard(core_->mu);
    core_->entries.push_back(entry);
    if (!core_->started) {
      core_->started = true;
      thread_ = std::thread(internal::Run, core_.get());
    }
    core_->cv.notify_all();
  }
  return KeptLock(std::move(entry), core_);
}

}  // namespace ipclock
