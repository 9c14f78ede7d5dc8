// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// WatchCore's checks and renewals as they fall due: handed to a store's
// lane, or run on the event thread.

#include <algorithm>
#include <mutex>
#include <utility>

#include "core/watch_check.h"
#include "core/watch_core.h"
#include "core/watch_report.h"
#include "platform/errors.h"

namespace ipclock {
namespace internal {

namespace {
// After a renewal fails for a reason that may pass (a server briefly down),
// it is tried again this soon, while the lease lasts.
constexpr int64_t kRenewRetryNanos = 200 * 1000 * 1000;
// An entry whose Lock the owner is using when its check is due is tried
// again this soon.
constexpr int64_t kBusyRetryNanos = 1000 * 1000;
// While a server's event source follows a lock, its interval check runs
// this many times less often: it is a safety net only.
constexpr int64_t kFollowedIntervalFactor = 10;
}  // namespace

void WatchCore::Dispatch(const std::shared_ptr<WatchEntry>& entry, int64_t now) {
  if (!entry->on_lane) {
    Service(entry, now, /*wait=*/false);
    return;
  }
  Lane* lane;
  {
    std::lock_guard<std::mutex> guard(mu_);
    if (entry->done || entry->in_flight) return;
    auto it = lanes_.find(entry->store.get());
    if (it == lanes_.end()) return;  // stopping
    lane = it->second;
    entry->in_flight = true;
  }
  {
    std::lock_guard<std::mutex> guard(lane->mu);
    lane->queue.push_back(entry);
  }
  lane->cv.notify_one();
}

void WatchCore::DeclareLeaseEnd(const std::shared_ptr<WatchEntry>& entry) {
  bool recorded;
  {
    std::lock_guard<std::mutex> guard(entry->state_mu);
    recorded = RecordLossLocked(
        *entry, StoreError(absl::StatusCode::kAborted, entry->describe, entry->resource,
                           "the lease ran out before it could be renewed (the store "
                           "did not answer in time)"));
  }
  if (recorded) Deliver(entry);
}

void WatchCore::Service(const std::shared_ptr<WatchEntry>& entry, int64_t now, bool wait) {
  bool renew;
  bool follow;
  {
    std::lock_guard<std::mutex> guard(mu_);
    if (entry->done) return;
    renew = entry->next_renew <= now;
    follow = entry->follow;
    entry->check_now = false;
    entry->follow = false;
  }
  std::unique_lock<std::mutex> lock_turn(entry->mu, std::defer_lock);
  if (wait) {
    lock_turn.lock();
  } else if (!lock_turn.try_lock()) {
    // The owner is using the Lock: look again in a moment.
    std::lock_guard<std::mutex> guard(mu_);
    entry->next_check = std::min(entry->next_check, Now() + kBusyRetryNanos);
    if (follow) entry->follow = true;
    return;
  }
  bool followed = false;
  if (follow && entry->lock) followed = entry->events->Follow(entry->event_tag);
  bool confirmed = false;
  const bool found = CheckLocked(*entry, renew, &confirmed);
  int64_t next_renew = kNever;
  bool still_watched = false;
  if (entry->lock && !found) {
    std::lock_guard<std::mutex> guard(entry->state_mu);
    still_watched = !entry->lost;
  }
  if (still_watched) {
    next_renew = NextRenewal(*entry->lock);
    if (renew && entry->lock->store().capabilities().expiring &&
        entry->lock->RemainingLifetime() < entry->lock->options().ttl / 2) {
      // The renewal did not take: try again soon while the lease lasts.
      next_renew = std::min(next_renew, Now() + kRenewRetryNanos);
    }
  }
  lock_turn.unlock();
  {
    std::lock_guard<std::mutex> guard(mu_);
    if (follow) entry->followed = followed;
    if (still_watched) {
      const bool told = entry->followed || (entry->tells_all && confirmed);
      const int64_t interval = entry->interval_nanos * (told ? kFollowedIntervalFactor : 1);
      entry->next_check = Now() + interval;
      entry->next_renew = next_renew;
      entry->poll_quiet = false;
    } else {
      entry->next_check = kNever;
      entry->next_renew = kNever;
      entry->poll_quiet = true;
    }
  }
  if (found) Deliver(entry);
}

void WatchCore::RunLane(Lane* lane) {
  for (;;) {
    std::shared_ptr<WatchEntry> entry;
    {
      std::unique_lock<std::mutex> guard(lane->mu);
      lane->cv.wait(guard, [lane] { return lane->stop || !lane->queue.empty(); });
      if (lane->stop) return;
      entry = std::move(lane->queue.front());
      lane->queue.pop_front();
    }
    Service(entry, Now(), /*wait=*/true);
    bool drained;
    {
      std::lock_guard<std::mutex> guard(lane->mu);
      drained = lane->queue.empty();
    }
    std::lock_guard<std::mutex> guard(mu_);
    entry->in_flight = false;
    // The event thread plans the entry again (its next check, its poll
    // descriptors) once the lane has finished the checks handed to it
    // together: one wake-up a batch, not one a lock.
    if (drained && events_) events_->Wake();
  }
}

}  // namespace internal
}  // namespace ipclock
