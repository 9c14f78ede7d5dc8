// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// WatchCore's entries: added, removed and checked at the owner's call, and
// the lanes and the event thread started and stopped.

#include "core/watch_core.h"

#include <algorithm>
#include <utility>

#include "core/lock_access.h"
#include "core/watch_check.h"
#include "core/watch_report.h"
#include "platform/process_id.h"
#include "platform/thread.h"

namespace ipclock {
namespace internal {

const int64_t kProbeNanos = absl::ToInt64Nanoseconds(kWatchProbeInterval);

// fork() copies a mutex in whatever state the watch's threads left it:
// every core's mutex is taken around fork() so that a child finds them free
// and can watch locks of its own (its Add() then starts afresh, and leaves
// the parent's lanes, whose threads it does not have, alone).
namespace {
struct CoreMutexes;
}  // namespace

WatchCore::WatchCore() {
  // Fails only without memory; a child then finds a mutex as fork() left
  // it, as it would without the watch.
  ForkHeldMutexes<CoreMutexes>::Add(&mu_).IgnoreError();
}

WatchCore::~WatchCore() { ForkHeldMutexes<CoreMutexes>::Remove(&mu_); }

absl::Status WatchCore::Add(const std::shared_ptr<WatchEntry>& entry) {
  Lock& lock = *entry->lock;
  WatchTargets targets =
      StoreCalls::GetWatchTargets(LockAccess::store(lock), LockAccess::key(lock));
  entry->store = LockAccess::shared_store(lock);
  entry->describe = lock.store().Describe();
  entry->resource = lock.resource();
  entry->fence = lock.fence();
  entry->expiring = lock.store().capabilities().expiring;
  entry->lease_end = LeaseEnd(lock);
  entry->on_lane = lock.store().capabilities().scope == Scope::kRemote ||
                   targets.events != nullptr || targets.checks_wait;
  if (targets.check_at_least_every >= absl::Milliseconds(1) &&
      targets.check_at_least_every < absl::Nanoseconds(entry->interval_nanos)) {
    entry->interval_nanos = absl::ToInt64Nanoseconds(targets.check_at_least_every);
  }
  std::lock_guard<std::mutex> guard(mu_);
  if (started_ && thread_pid_ != CurrentPid()) {
    // A fork()ed child: the threads and the parent's entries stayed with the
    // parent. The entries are the parent's to watch, not ours; the lanes'
    // mutexes may have been held at the fork, so their copies are left
    // alone (leaked).
    entries_.clear();
    wd_users_.clear();
    lanes_.clear();
    events_.reset();
    started_ = false;
  }
  if (!events_) {
    absl::StatusOr<KernelEvents> events = KernelEvents::Create();
    if (!events.ok()) return events.status();
    events_.emplace(*std::move(events));
  }
  if (entry->on_lane) {
    absl::Status lane_error;
    if (LaneFor(entry->store.get(), &lane_error) == nullptr) return lane_error;
  }
  bool events_tell_all = targets.events_tell_all;
  for (size_t i = 0; i < targets.inode_fds.size() + targets.dir_fds_above.size(); ++i) {
    absl::StatusOr<int> wd =
        i < targets.inode_fds.size()
            ? events_->WatchInode(targets.inode_fds[i])
            : events_->WatchDirMoves(targets.dir_fds_above[i - targets.inode_fds.size()]);
    // Without an inotify watch (e.g. at fs.inotify.max_user_watches) the
    // interval check still finds a loss, only later.
    if (!wd.ok()) {
      events_tell_all = false;
      continue;
    }
    entry->wds.push_back(*wd);
    ++wd_users_[*wd];
  }
  // Without the mount table, a mount over the lock is the interval
  // check's to find.
  entry->mounts = targets.mounts && events_->WatchMounts().ok();
  if (targets.mounts && !entry->mounts) events_tell_all = false;
  entry->poll_fds.assign(targets.poll_fds.begin(), targets.poll_fds.end());
  entry->tells_all =
      (targets.poll_fds_tell_all && !entry->poll_fds.empty()) || events_tell_all;
  entry->added_by = CurrentPid();
  entry->probe = std::move(targets.probe);
  entry->events = std::move(targets.events);
  entry->event_tag = std::move(targets.event_tag);
  // The first check, at once, follows the tag before it looks.
  entry->follow = entry->events != nullptr;
  entry->check_now = entry->follow;
  entry->next_check = Now() + entry->interval_nanos;
  entry->next_renew = NextRenewal(lock);
  if (entry->probe != nullptr && next_probe_ == kNever) next_probe_ = Now() + kProbeNanos;
  if (!started_) {
    stop_ = false;
    if (absl::Status s = StartThread("ipclock-watch", [this] { Run(); }, &thread_);
        !s.ok()) {
      DropWatches(*entry);
      return s;
    }
    started_ = true;
    thread_pid_ = CurrentPid();
  }
  entries_.push_back(entry);
  events_->Wake();
  return absl::OkStatus();
}

Lane* WatchCore::LaneFor(const Store* store, absl::Status* error) {
  auto it = lanes_.find(store);
  if (it != lanes_.end()) return it->second;
  Lane* lane = new Lane();
  absl::Status s = StartThread("ipclock-check", [this, lane] { RunLane(lane); }, &lane->thread);
  if (!s.ok()) {
    delete lane;
    *error = s;
    return nullptr;
  }
  lanes_.emplace(store, lane);
  return lane;
}

void WatchCore::DropWatches(WatchEntry& entry) {
  for (int wd : entry.wds) {
    auto it = wd_users_.find(wd);
    if (it == wd_users_.end()) continue;
    if (--it->second == 0) {
      events_->Unwatch(wd);
      wd_users_.erase(it);
    }
  }
  entry.wds.clear();
}

void WatchCore::Remove(WatchEntry* entry) {
  std::lock_guard<std::mutex> guard(mu_);
  entry->done = true;
  // A fork()ed child shares the parent's inotify instance and wake
  // descriptor until its own Add() makes new ones: removing the parent's
  // inotify watches, or waking the parent's thread, from a child that lets
  // go of its copy of a watched lock would act on the parent's watch.
  const pid_t pid = CurrentPid();
  if (entry->added_by == pid) {
    DropWatches(*entry);
  } else {
    entry->wds.clear();
  }
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const std::shared_ptr<WatchEntry>& e) {
                                  return e.get() == entry;
                                }),
                 entries_.end());
  if (events_ && started_ && thread_pid_ == pid) events_->Wake();
}

void WatchCore::Stop() {
  std::vector<Lane*> lanes;
  {
    std::lock_guard<std::mutex> guard(mu_);
    if (!started_ || thread_pid_ != CurrentPid()) return;
    stop_ = true;
    events_->Wake();
    for (auto& [store, lane] : lanes_) lanes.push_back(lane);
    lanes_.clear();
  }
  JoinThread(thread_);
  for (Lane* lane : lanes) {
    {
      std::lock_guard<std::mutex> guard(lane->mu);
      lane->stop = true;
    }
    lane->cv.notify_one();
    // Waits for a check under way, which the store's timeouts bound.
    JoinThread(lane->thread);
    delete lane;
  }
  std::lock_guard<std::mutex> guard(mu_);
  started_ = false;
}

absl::Status WatchCore::CheckNow(WatchEntry& entry) {
  absl::Status result;
  bool lost;
  {
    std::lock_guard<std::mutex> guard(entry.mu);
    if (!entry.lock) {
      return absl::FailedPreconditionError(
          "ipclock: WatchedLock::CheckNow on a lock already released, taken back "
          "or moved from");
    }
    CheckLocked(entry, /*renew=*/false);
    std::lock_guard<std::mutex> state(entry.state_mu);
    lost = entry.lost;
    if (entry.lost) {
      result = entry.error;
    } else if (!entry.lock->is_acquired()) {
      result = absl::FailedPreconditionError("ipclock: the watched lock is not held");
    }
  }
  // A loss is reported before the call that returns it: found here, it is
  // delivered here; found a moment ago by the watch's thread, its report
  // (on a thread of its own, or not yet started) is waited for or
  // delivered here.
  if (lost) {
    std::unique_lock<std::mutex> turn = ReportTurn(entry);
    DeliverLocked(entry);
  }
  return result;
}

}  // namespace internal
}  // namespace ipclock
