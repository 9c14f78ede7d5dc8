// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Threads. One event thread per watch sleeps in KernelEvents::Wait() until
// the earliest check, renewal, probe or lease end that is due, an inotify
// event on a watched inode, a change of the mount table, a watched socket
// turning readable, an event source having something to say, or a wake
// from another thread. It checks
// the locks of local stores itself (system calls), and runs their probes.
// The locks of a remote store, of a store with an event source, or of one
// whose checks may wait on a server (WatchTargets::checks_wait), are
// checked and renewed on a lane of that store's own (a thread, made with the
// store's first such lock), so that a server that is slow or stopped holds
// up the checks of its own locks only. Reports (the sink of a lost lock)
// run on a thread of their own each, made when a loss is found: losses are
// rare, and a sink that blocks then delays nothing else.
//
// What a stuck check cannot hide. Each entry keeps, outside the Lock, the
// end of its lease as last renewed: the event thread reports the loss when
// it passes, whether or not the lane's check or renewal has come back. And
// `lost()`, `status()`, `fence()` and `RemainingLifetime()` read only such
// copies, so an owner asking them never waits for a check.
//
// Mutexes, and their order. WatchCore::mu_ plans (what is due, what to poll)
// and is never held across a store call. An entry's `mu` guards its Lock: a
// check or renewal holds it across the store call, and so does the owner's
// CheckNow(), Release() or Take(); the event thread only ever tries it.
// `state_mu` guards what a check found, and is held for a few loads and
// stores. `report_mu` is held while a report runs. Allowed orders: mu_ then
// mu (tried); mu then state_mu; report_mu then state_mu; Lane::mu alone.

#include "ipclock/lock_watch.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/diagnostics.h"
#include "core/lock_access.h"
#include "ipclock/spi/store_interface.h"
#include "platform/errors.h"
#include "platform/kernel_events.h"
#include "platform/thread.h"
#include "platform/process_id.h"

namespace ipclock {
namespace internal {

namespace {
constexpr int64_t kNever = INT64_MAX;
// After a renewal fails for a reason that may pass (a server briefly down),
// it is tried again this soon, while the lease lasts.
constexpr int64_t kRenewRetryNanos = 200 * 1000 * 1000;
// An entry whose Lock the owner is using when its check is due is tried
// again this soon.
constexpr int64_t kBusyRetryNanos = 1000 * 1000;
const int64_t kProbeNanos = absl::ToInt64Nanoseconds(kWatchProbeInterval);
// While a server's event source follows a lock, its interval check runs
// this many times less often: it is a safety net only.
constexpr int64_t kFollowedIntervalFactor = 10;

int64_t Now() { return Deadline::NowNanos(); }
}  // namespace

class WatchCore;

// A loss to report, and the store whose sink gets it when the watch has
// none of its own.
struct LossReport {
  Diagnostic diagnostic;
  std::shared_ptr<Store> store;
};

struct WatchEntry {
  WatchEntry(Lock l, WatchOptions o) : lock(std::move(l)), options(std::move(o)) {}

  // The process that handed the lock to the watch. In a fork()ed child the
  // copy of the entry is the parent's: the watch's threads stayed with the
  // parent, and if one of them held a mutex below at the fork, the child's
  // copy of it stays locked for good. No thread of the child but the
  // WatchedLock's caller uses the copy, so the child reads it without them
  // (WatchedLock below).
  const pid_t owner = CurrentPid();

  std::mutex mu;             // the owner's calls and the checks take turns
  std::optional<Lock> lock;  // guarded by mu; empty once released or taken back
  const WatchOptions options;
  int64_t interval_nanos = 0;
  // Fixed at Add(): the lock's store and what names it in reports.
  std::shared_ptr<Store> store;
  std::string describe;
  std::string resource;
  std::optional<uint64_t> fence;
  bool expiring = false;
  // Checked on a lane (a remote store, or an event source) rather than on
  // the event thread.
  bool on_lane = false;

  // What the checks found, guarded by state_mu.
  std::mutex state_mu;
  bool lost = false;
  absl::Status error;
  std::optional<LossReport> report;  // found, not yet delivered
  int64_t lease_end = kNever;        // the lease as last renewed (monotonic ns)

  // Planned by the event thread, guarded by WatchCore::mu_.
  int64_t next_check = kNever;
  int64_t next_renew = kNever;
  bool check_now = false;
  bool in_flight = false;   // on a lane's queue or being checked there
  bool poll_quiet = false;  // poll fds fired: quiet until the next planned check
  std::vector<int> wds;
  std::vector<int> poll_fds;
  // The process whose Add() made `wds`: a fork()ed child's copy of the
  // entry refers to the parent's inotify watches.
  pid_t added_by = 0;
  std::shared_ptr<WatchProbe> probe;
  std::shared_ptr<WatchEventSource> events;
  std::string event_tag;
  bool follow = false;    // Follow() the tag before the next check
  bool followed = false;  // the source follows it: the interval is a safety net
  // Fixed at Add(): its poll fds, or its inotify watches, probe and the
  // mount table, tell of every loss (WatchTargets).
  bool tells_all = false;
  bool mounts = false;  // checked when the mount table changes
  // Set by the owner (under WatchCore::mu_) when it is done with the entry.
  bool done = false;

  // A report runs under report_mu, with no other mutex held: its sink may
  // call the WatchedLock. Finish() takes it, so that once it returns no
  // report of this lock runs or will run, and a loss that lost() showed has
  // been reported. A call from inside a sink is told apart by `reporter`
  // and does not wait.
  std::mutex report_mu;
  bool finished = false;  // guarded by report_mu
  std::atomic<std::thread::id> reporter{};
};

// The thread that checks and renews the locks of one store.
struct Lane {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<WatchEntry>> queue;  // guarded by mu
  bool stop = false;                              // guarded by mu
  pthread_t thread{};
};

class WatchCore : public std::enable_shared_from_this<WatchCore> {
 public:
  WatchCore();
  ~WatchCore();

  absl::Status Add(const std::shared_ptr<WatchEntry>& entry);
  void Remove(WatchEntry* entry);
  void Stop();
  // Runs the check of `entry` now, on the caller's thread.
  absl::Status CheckNow(WatchEntry& entry);

 private:
  void Run();
  void RunLane(Lane* lane);
  // Under mu_: the entries due by `now`, the descriptors to poll, the
  // probes of the watched locks and whether they are due, the leases that
  // ran out, and how long to sleep.
  struct Plan {
    std::vector<std::shared_ptr<WatchEntry>> due;
    std::vector<std::shared_ptr<WatchEntry>> expired;
    std::vector<std::shared_ptr<WatchProbe>> probes;
    bool probes_due = false;
    int64_t next_probe = kNever;
    // The earliest check, renewal or lease end: until then, a wake-up
    // with nothing fired is for the probes alone.
    int64_t earliest_other = kNever;
    std::vector<int> poll_fds;
    std::vector<std::shared_ptr<WatchEventSource>> sources;
    // events_->mounts_fd(), read under mu_: Add() opens it on another
    // thread, while this one may be in Wait().
    int mounts_fd = -1;
    int timeout_ms = -1;
  };
  Plan MakePlan(int64_t now);
  // Under mu_: what fired makes the entries it concerns due now.
  void Mark(const KernelEvents::Fired& fired);
  void MarkProbe(const WatchProbe* probe);
  // Runs `probes`; those that saw a change make their entries due (true).
  bool RunProbes(const std::vector<std::shared_ptr<WatchProbe>>& probes);
  void MarkSource(const WatchEventSource* source, bool all,
                  const absl::flat_hash_set<std::string>& tags);
  // Hands a due entry to its lane, or checks it here.
  void Dispatch(const std::shared_ptr<WatchEntry>& entry, int64_t now);
  // Checks and renews one entry as due; `wait` says whether to wait for
  // its mutex (a lane) or to try it (the event thread).
  void Service(const std::shared_ptr<WatchEntry>& entry, int64_t now, bool wait);
  void DeclareLeaseEnd(const std::shared_ptr<WatchEntry>& entry);
  // Under mu_.
  Lane* LaneFor(const Store* store, absl::Status* error);
  void DropWatches(WatchEntry& entry);

  std::mutex mu_;
  // Made with the first lock, and again in a fork()ed child (whose copy of
  // the inotify descriptor would share the parent's queue).
  std::optional<KernelEvents> events_;  // guarded by mu_
  std::vector<std::shared_ptr<WatchEntry>> entries_;  // guarded by mu_
  absl::flat_hash_map<int, int> wd_users_;            // guarded by mu_
  // One lane per store whose locks are checked on one; never removed while
  // the core lives (a store seldom stops being used for good).
  absl::flat_hash_map<const Store*, Lane*> lanes_;  // guarded by mu_
  int64_t next_probe_ = kNever;                      // guarded by mu_
  bool stop_ = false;                                // guarded by mu_
  bool started_ = false;                             // guarded by mu_
  pid_t thread_pid_ = 0;                             // guarded by mu_
  pthread_t thread_{};
};

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

namespace {

// When the lease of `lock` is next renewed: a third of the shorter of its
// TTL and what is left, so that two renewals may fail or be late before it
// runs out.
int64_t NextRenewal(const Lock& lock) {
  if (!lock.store().capabilities().expiring) return kNever;
  absl::Duration lease = std::min(lock.options().ttl, lock.RemainingLifetime());
  if (lease == absl::InfiniteDuration()) return kNever;
  return Now() + absl::ToInt64Nanoseconds(lease / 3);
}

int64_t LeaseEnd(const Lock& lock) {
  if (!lock.store().capabilities().expiring) return kNever;
  const absl::Duration left = lock.RemainingLifetime();
  if (left == absl::InfiniteDuration()) return kNever;
  return Now() + absl::ToInt64Nanoseconds(left);
}

// Takes entry.report_mu unless this thread is running entry's report,
// which holds it already.
std::unique_lock<std::mutex> ReportTurn(WatchEntry& entry) {
  if (entry.reporter.load() == std::this_thread::get_id()) {
    return std::unique_lock<std::mutex>();
  }
  return std::unique_lock<std::mutex>(entry.report_mu);
}

// Under entry.report_mu: delivers the report found and not yet delivered.
void DeliverLocked(WatchEntry& entry) {
  if (entry.finished) return;  // its owner is done with it: nobody to tell
  std::optional<LossReport> loss;
  {
    std::lock_guard<std::mutex> guard(entry.state_mu);
    loss.swap(entry.report);
  }
  if (!loss) return;
  entry.reporter.store(std::this_thread::get_id());
  if (entry.options.diagnostics) {
    entry.options.diagnostics(loss->diagnostic);
  } else {
    EmitDiagnostic(loss->store.get(), loss->diagnostic);
  }
  entry.reporter.store(std::thread::id());
}

// Delivers the report on a thread of its own, so that a sink that blocks
// delays no check; on this thread if none can be made.
void Deliver(const std::shared_ptr<WatchEntry>& entry) {
  pthread_t thread;
  absl::Status started = StartThread(
      "ipclock-report",
      [entry] {
        std::unique_lock<std::mutex> turn(entry->report_mu);
        DeliverLocked(*entry);
      },
      &thread);
  if (started.ok()) {
    DetachThread(thread);
    return;
  }
  std::unique_lock<std::mutex> turn = ReportTurn(*entry);
  DeliverLocked(*entry);
}

// Under entry.state_mu: records the loss `found` as what the watch found,
// with its report, unless a loss was found already. True if recorded.
bool RecordLossLocked(WatchEntry& entry, const absl::Status& found) {
  if (entry.lost) return false;
  entry.lost = true;
  entry.error = found;
  LossReport report;
  report.store = entry.store;
  report.diagnostic.kind = DiagnosticKind::kLockLost;
  report.diagnostic.severity = DiagnosticSeverity::kWarning;
  report.diagnostic.text = absl::StrCat("ipclock: warning: lost a held lock: ", found.message());
  report.diagnostic.store = entry.describe;
  report.diagnostic.resource = entry.resource;
  report.diagnostic.status = found;
  entry.report = std::move(report);
  return true;
}

// The check itself, under entry.mu. True if this check is the one that
// found a loss (its report is then pending in the entry).
bool CheckLocked(WatchEntry& entry, bool renew, bool* confirmed = nullptr) {
  if (confirmed != nullptr) *confirmed = false;
  {
    std::lock_guard<std::mutex> guard(entry.state_mu);
    if (entry.lost) return false;
  }
  if (!entry.lock || !entry.lock->is_acquired()) return false;
  Lock& lock = *entry.lock;
  absl::Status found;
  absl::Status renewed;
  if (renew) {
    renewed = lock.Refresh();
    if (absl::IsAborted(renewed)) {
      found = renewed;
    } else if (!renewed.ok() && lock.IsExpired()) {
      found = StoreError(absl::StatusCode::kAborted, lock.store().Describe(),
                         lock.resource(),
                         absl::StrCat("the lease ran out while it could not be "
                                      "renewed: ", renewed.message()));
    }
  }
  if (found.ok()) {
    absl::Status held = StoreCalls::CheckHeld(LockAccess::store(lock), LockAccess::key(lock));
    if (confirmed != nullptr) *confirmed = held.ok();
    if (absl::IsAborted(held)) {
      found = held;
    } else if (lock.store().capabilities().expiring && lock.IsExpired()) {
      found = StoreError(absl::StatusCode::kAborted, lock.store().Describe(),
                         lock.resource(),
                         held.ok() ? std::string("the lease ran out")
                                   : absl::StrCat("the lease ran out; the store "
                                                  "could not be asked: ",
                                                  held.message()));
    }
  }
  std::lock_guard<std::mutex> guard(entry.state_mu);
  if (found.ok()) {
    entry.lease_end = LeaseEnd(lock);
    return false;
  }
  if (!renewed.ok() && !absl::IsAborted(renewed) &&
      !absl::StrContains(found.message(), renewed.message())) {
    // The store found the lease gone a moment before the key did: the
    // failed renewal is still why.
    found = absl::Status(found.code(), absl::StrCat(found.message(),
                                                    "; it could not be renewed: ",
                                                    renewed.message()));
  }
  // Counted here, where the check holds the Lock; a loss declared from
  // outside the Lock (DeclareLeaseEnd) is counted when the Lock lets go.
  LockAccess::NoteLost(lock);
  return RecordLossLocked(entry, found);
}

}  // namespace

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

WatchCore::Plan WatchCore::MakePlan(int64_t now) {
  Plan plan;
  int64_t earliest = kNever;
  if (next_probe_ != kNever) {
    absl::flat_hash_set<const WatchProbe*> seen;
    for (const std::shared_ptr<WatchEntry>& e : entries_) {
      if (e->probe != nullptr && seen.insert(e->probe.get()).second) {
        plan.probes.push_back(e->probe);
      }
    }
    if (plan.probes.empty()) {
      next_probe_ = kNever;
    } else {
      plan.probes_due = now >= next_probe_;
      if (plan.probes_due) next_probe_ = now + kProbeNanos;
      plan.next_probe = next_probe_;
    }
  }
  absl::flat_hash_set<const WatchEventSource*> sources;
  std::vector<size_t> early;  // entries_'s indices of those not due yet
  for (size_t i = 0; i < entries_.size(); ++i) {
    const std::shared_ptr<WatchEntry>& e = entries_[i];
    int64_t lease_end;
    bool lost;
    {
      std::lock_guard<std::mutex> guard(e->state_mu);
      lease_end = e->lease_end;
      lost = e->lost;
    }
    if (lost) continue;
    if (lease_end <= now && e->in_flight) {
      // Its check or renewal has not come back, and the lease is over.
      plan.expired.push_back(e);
      continue;
    }
    earliest = std::min(earliest, lease_end);
    if (e->events != nullptr && sources.insert(e->events.get()).second) {
      plan.sources.push_back(e->events);
    }
    if (e->in_flight) continue;
    if (e->check_now || e->next_check <= now || e->next_renew <= now || lease_end <= now) {
      plan.due.push_back(e);
      continue;
    }
    early.push_back(i);
  }
  // Checks due by now take along those due within half their interval:
  // checked early, never late, the locks of a watch soon fall into step and
  // are checked in one wake-up an interval rather than one each.
  const bool some_due = !plan.due.empty();
  for (size_t i : early) {
    const std::shared_ptr<WatchEntry>& e = entries_[i];
    if (some_due && e->next_check - e->interval_nanos / 2 <= now) {
      plan.due.push_back(e);
      continue;
    }
    earliest = std::min({earliest, e->next_check, e->next_renew});
    if (!e->poll_quiet) {
      plan.poll_fds.insert(plan.poll_fds.end(), e->poll_fds.begin(), e->poll_fds.end());
    }
  }
  plan.earliest_other = earliest;
  earliest = std::min(earliest, plan.next_probe);
  // The probes planned here run before the wait, which needs no new plan.
  if (!plan.due.empty() || !plan.expired.empty()) {
    plan.timeout_ms = 0;
  } else if (earliest == kNever) {
    plan.timeout_ms = -1;
  } else {
    // Rounded up: waking a little late is harmless, early would spin.
    plan.timeout_ms = static_cast<int>(
        std::min<int64_t>((earliest - now + 999999) / 1000000, 60 * 60 * 1000));
  }
  return plan;
}

void WatchCore::Mark(const KernelEvents::Fired& fired) {
  for (const std::shared_ptr<WatchEntry>& e : entries_) {
    bool hit = fired.overflow || (fired.mounts && e->mounts);
    for (int wd : fired.wds) hit = hit || std::count(e->wds.begin(), e->wds.end(), wd) > 0;
    for (int fd : fired.poll_fds) {
      if (std::count(e->poll_fds.begin(), e->poll_fds.end(), fd) > 0) {
        hit = true;
        e->poll_quiet = true;
      }
    }
    if (hit) e->check_now = true;
  }
}

bool WatchCore::RunProbes(const std::vector<std::shared_ptr<WatchProbe>>& probes) {
  bool changed = false;
  for (const std::shared_ptr<WatchProbe>& probe : probes) {
    if (!probe->Changed()) continue;
    std::lock_guard<std::mutex> guard(mu_);
    MarkProbe(probe.get());
    changed = true;
  }
  return changed;
}

void WatchCore::MarkProbe(const WatchProbe* probe) {
  for (const std::shared_ptr<WatchEntry>& e : entries_) {
    if (e->probe.get() == probe) e->check_now = true;
  }
}

void WatchCore::MarkSource(const WatchEventSource* source, bool all,
                           const absl::flat_hash_set<std::string>& tags) {
  for (const std::shared_ptr<WatchEntry>& e : entries_) {
    if (e->events.get() != source || (!all && !tags.contains(e->event_tag))) continue;
    e->check_now = true;
    // Tracking of a key ends with the change it reported: ask again.
    e->follow = true;
    if (all) e->followed = false;
  }
}

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

void WatchCore::Run() {
  for (;;) {
    Plan plan;
    {
      std::lock_guard<std::mutex> guard(mu_);
      if (stop_) return;
      plan = MakePlan(Now());
      plan.mounts_fd = events_->mounts_fd();
    }
    for (const std::shared_ptr<WatchEntry>& e : plan.expired) DeclareLeaseEnd(e);
    if (plan.probes_due && RunProbes(plan.probes)) continue;  // the next plan has them due
    if (!plan.due.empty()) {
      const int64_t now = Now();
      for (const std::shared_ptr<WatchEntry>& e : plan.due) Dispatch(e, now);
      continue;
    }
    if (plan.timeout_ms == 0) continue;
    std::vector<int> poll_fds = plan.poll_fds;
    std::vector<const WatchEventSource*> source_of_fd;
    source_of_fd.resize(poll_fds.size(), nullptr);
    for (const std::shared_ptr<WatchEventSource>& source : plan.sources) {
      const int fd = source->fd();
      if (fd < 0) continue;
      poll_fds.push_back(fd);
      source_of_fd.push_back(source.get());
    }
    // events_ is set before the thread starts and replaced only in a
    // child, where this thread does not exist.
    KernelEvents::Fired fired = events_->Wait(poll_fds, plan.mounts_fd, plan.timeout_ms);
    // While nothing happens, the wake-ups are the probes', 20 a second: they
    // run, and the thread sleeps again, without a new plan, which walks
    // every entry (for 100 watched locks that cost more than the probes).
    // Anything fired or woken, a change probed, or a check, renewal or
    // lease end due ends it.
    int64_t next_probe = plan.next_probe;
    bool probed_change = false;
    while (!fired.any() && !plan.probes.empty()) {
      const int64_t now = Now();
      if (now >= plan.earliest_other) break;
      if (now >= next_probe) {
        next_probe = now + kProbeNanos;
        if (RunProbes(plan.probes)) {
          probed_change = true;
          break;
        }
      }
      const int64_t until = std::min(next_probe, plan.earliest_other);
      fired = events_->Wait(poll_fds, plan.mounts_fd,
                            static_cast<int>((until - now + 999999) / 1000000));
    }
    if (next_probe != plan.next_probe) {
      std::lock_guard<std::mutex> guard(mu_);
      if (next_probe_ != kNever) next_probe_ = std::max(next_probe_, next_probe);
    }
    if (probed_change) continue;
    // Event sources first, without mu_: draining reads a socket.
    for (const std::shared_ptr<WatchEventSource>& source : plan.sources) {
      const int fd = source->fd();
      const bool ready = fd >= 0 && std::count(fired.poll_fds.begin(), fired.poll_fds.end(), fd);
      if (!ready) continue;
      absl::flat_hash_set<std::string> tags;
      const bool some =
          source->Drain([&tags](absl::string_view tag) { tags.insert(std::string(tag)); });
      std::lock_guard<std::mutex> guard(mu_);
      MarkSource(source.get(), !some, tags);
    }
    std::lock_guard<std::mutex> guard(mu_);
    Mark(fired);
  }
}

}  // namespace internal

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
