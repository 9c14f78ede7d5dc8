// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// One thread per watch sleeps in KernelEvents::Wait() until the earliest
// check or renewal that is due, an inotify event on a watched inode, a
// watched socket turning readable, or a wake from another thread. Each
// watched Lock sits in an entry with its own mutex, which the thread holds
// while it checks or renews that lock and the owner's WatchedLock holds for
// every call: a slow check of one lock (a server timeout) delays the owner
// of that lock only.
//
// Lock order: an entry's mutex may be taken with the core's held, never the
// other way round. The thread takes the core's mutex only to plan (which
// entries are due, which descriptors to poll) and runs checks without it.

#include "ipclock/lock_watch.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/lock_access.h"
#include "core/diagnostics.h"
#include "ipclock/spi/store_interface.h"
#include "platform/errors.h"
#include "platform/kernel_events.h"
#include "platform/thread.h"

namespace ipclock {
namespace internal {

namespace {
constexpr int64_t kNever = INT64_MAX;
// After a renewal fails for a reason that may pass (a server briefly down),
// it is tried again this soon, while the lease lasts.
constexpr int64_t kRenewRetryNanos = 200 * 1000 * 1000;
}  // namespace

class WatchCore;
void LockAllCoresForFork();
void UnlockAllCoresAfterFork();

struct WatchEntry {
  WatchEntry(Lock l, WatchOptions o) : lock(std::move(l)), options(std::move(o)) {}

  std::mutex mu;             // the owner's calls and the watch's work take turns
  std::optional<Lock> lock;  // empty once released or taken back
  const WatchOptions options;
  bool lost = false;   // guarded by mu
  absl::Status error;  // guarded by mu
  int64_t interval_nanos = 0;

  // Planned by the thread, guarded by WatchCore::mu.
  int64_t next_check = kNever;
  int64_t next_renew = kNever;
  bool check_now = false;
  bool poll_quiet = false;  // poll fds fired: quiet until the next planned check
  std::vector<int> wds;
  std::vector<int> poll_fds;
  // The process whose Add() made `wds`: a fork()ed child's copy of the
  // entry refers to the parent's inotify watches.
  pid_t added_by = 0;
  // Set by the owner (under WatchCore::mu) when it is done with the entry.
  bool done = false;

  // A check and the report of what it found run under report_mu (the report
  // with no other mutex held: its sink may call the WatchedLock). Finish()
  // takes report_mu after leaving the watch, so that once it returns no
  // report of this lock runs or will run, and a loss that lost() showed
  // has been reported: a caller may then free what its callback uses. A call
  // from inside a sink is told apart by `reporter` and does not wait.
  std::mutex report_mu;
  bool finished = false;  // guarded by report_mu
  std::atomic<std::thread::id> reporter{};
};

class WatchCore {
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
  // Under mu_: the entries due by `now`, the descriptors to poll and how
  // long to sleep.
  std::vector<std::shared_ptr<WatchEntry>> Plan(int64_t now, std::vector<int>* poll_fds,
                                                int* timeout_ms);
  void Mark(const KernelEvents::Fired& fired);
  // Checks and renews one entry as due; reports a loss.
  void Service(WatchEntry& entry, int64_t now);
  void DropWatches(WatchEntry& entry);

  std::mutex mu_;
  // Made with the first lock, and again in a fork()ed child (whose copy of
  // the inotify descriptor would share the parent's queue).
  std::optional<KernelEvents> events_;  // guarded by mu_
  std::vector<std::shared_ptr<WatchEntry>> entries_;  // guarded by mu_
  absl::flat_hash_map<int, int> wd_users_;            // guarded by mu_
  bool stop_ = false;                                 // guarded by mu_
  friend void LockAllCoresForFork();
  friend void UnlockAllCoresAfterFork();
  bool started_ = false;                              // guarded by mu_
  pid_t thread_pid_ = 0;                              // guarded by mu_
  pthread_t thread_{};
};

// fork() copies a mutex in whatever state the watch's thread left it: every
// core's mutex is taken around fork() so that a child finds them free and
// can watch locks of its own (its Add() then starts afresh).
std::mutex& CoresMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}
std::vector<WatchCore*>& Cores() {
  static std::vector<WatchCore*>* cores = new std::vector<WatchCore*>();
  return *cores;
}
void LockAllCoresForFork() {
  CoresMutex().lock();
  for (WatchCore* core : Cores()) core->mu_.lock();
}
void UnlockAllCoresAfterFork() {
  for (WatchCore* core : Cores()) core->mu_.unlock();
  CoresMutex().unlock();
}

WatchCore::WatchCore() {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork(LockAllCoresForFork, UnlockAllCoresAfterFork,
                   UnlockAllCoresAfterFork);
  });
  std::lock_guard<std::mutex> guard(CoresMutex());
  Cores().push_back(this);
}

WatchCore::~WatchCore() {
  std::lock_guard<std::mutex> guard(CoresMutex());
  Cores().erase(std::remove(Cores().begin(), Cores().end(), this), Cores().end());
}

namespace {

int64_t Now() { return Deadline::NowNanos(); }

// When the lease of `lock` is next renewed: a third of the shorter of its
// TTL and what is left, so that two renewals may fail or be late before it
// runs out.
int64_t NextRenewal(const Lock& lock) {
  if (!lock.store().capabilities().expiring) return kNever;
  absl::Duration lease = std::min(lock.options().ttl, lock.RemainingLifetime());
  if (lease == absl::InfiniteDuration()) return kNever;
  return Now() + absl::ToInt64Nanoseconds(lease / 3);
}

// Takes entry.report_mu unless this thread is running entry's report,
// which holds it already.
std::unique_lock<std::mutex> ReportTurn(WatchEntry& entry) {
  if (entry.reporter.load() == std::this_thread::get_id()) {
    return std::unique_lock<std::mutex>();
  }
  return std::unique_lock<std::mutex>(entry.report_mu);
}

// A loss to report, and the store whose sink gets it when the watch has
// none of its own.
struct LossReport {
  Diagnostic diagnostic;
  std::shared_ptr<Store> store;
};

// Under entry.report_mu.
void Report(WatchEntry& entry, const LossReport& loss) {
  if (entry.finished) return;  // its owner is done with it: nobody to tell
  entry.reporter.store(std::this_thread::get_id());
  if (entry.options.diagnostics) {
    entry.options.diagnostics(loss.diagnostic);
  } else {
    EmitDiagnostic(loss.store.get(), loss.diagnostic);
  }
  entry.reporter.store(std::thread::id());
}

// The check itself, under entry.mu. Returns the loss to report, if this
// check is the one that found it.
std::optional<LossReport> CheckLocked(WatchEntry& entry, bool renew) {
  if (!entry.lock || entry.lost || !entry.lock->is_acquired()) return std::nullopt;
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
  if (found.ok()) return std::nullopt;
  if (!renewed.ok() && !absl::IsAborted(renewed) &&
      !absl::StrContains(found.message(), renewed.message())) {
    // The store found the lease gone a moment before the key did: the
    // failed renewal is still why.
    found = absl::Status(found.code(), absl::StrCat(found.message(),
                                                    "; it could not be renewed: ",
                                                    renewed.message()));
  }
  entry.lost = true;
  entry.error = found;
  LockAccess::NoteLost(lock);
  LossReport report;
  report.store = LockAccess::shared_store(lock);
  report.diagnostic.kind = DiagnosticKind::kLockLost;
  report.diagnostic.severity = DiagnosticSeverity::kWarning;
  report.diagnostic.text = absl::StrCat("ipclock: warning: lost a held lock: ", found.message());
  report.diagnostic.store = lock.store().Describe();
  report.diagnostic.resource = lock.resource();
  report.diagnostic.status = found;
  return report;
}

}  // namespace

absl::Status WatchCore::Add(const std::shared_ptr<WatchEntry>& entry) {
  Lock& lock = *entry->lock;
  WatchTargets targets =
      StoreCalls::GetWatchTargets(LockAccess::store(lock), LockAccess::key(lock));
  std::lock_guard<std::mutex> guard(mu_);
  if (started_ && thread_pid_ != getpid()) {
    // A fork()ed child: the thread and the parent's entries stayed with the
    // parent. The entries are the parent's to watch, not ours.
    entries_.clear();
    wd_users_.clear();
    events_.reset();
    started_ = false;
  }
  if (!events_) {
    absl::StatusOr<KernelEvents> events = KernelEvents::Create();
    if (!events.ok()) return events.status();
    events_.emplace(*std::move(events));
  }
  for (int fd : targets.inode_fds) {
    absl::StatusOr<int> wd = events_->WatchInode(fd);
    // Without an inotify watch (e.g. at fs.inotify.max_user_watches) the
    // interval check still finds a loss, only later.
    if (!wd.ok()) continue;
    entry->wds.push_back(*wd);
    ++wd_users_[*wd];
  }
  entry->poll_fds.assign(targets.poll_fds.begin(), targets.poll_fds.end());
  entry->added_by = getpid();
  entry->next_check = Now() + entry->interval_nanos;
  entry->next_renew = NextRenewal(lock);
  if (!started_) {
    stop_ = false;
    if (absl::Status s = StartThread("ipclock-watch", [this] { Run(); }, &thread_);
        !s.ok()) {
      DropWatches(*entry);
      return s;
    }
    started_ = true;
    thread_pid_ = getpid();
  }
  entries_.push_back(entry);
  events_->Wake();
  return absl::OkStatus();
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
  const pid_t pid = getpid();
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
  {
    std::lock_guard<std::mutex> guard(mu_);
    if (!started_ || thread_pid_ != getpid()) return;
    stop_ = true;
    events_->Wake();
  }
  pthread_join(thread_, nullptr);
  std::lock_guard<std::mutex> guard(mu_);
  started_ = false;
}

std::vector<std::shared_ptr<WatchEntry>> WatchCore::Plan(int64_t now,
                                                         std::vector<int>* poll_fds,
                                                         int* timeout_ms) {
  std::vector<std::shared_ptr<WatchEntry>> due;
  int64_t earliest = kNever;
  for (const std::shared_ptr<WatchEntry>& e : entries_) {
    if (e->check_now || e->next_check <= now || e->next_renew <= now) {
      due.push_back(e);
      continue;
    }
    earliest = std::min({earliest, e->next_check, e->next_renew});
    if (!e->poll_quiet) poll_fds->insert(poll_fds->end(), e->poll_fds.begin(), e->poll_fds.end());
  }
  if (!due.empty()) {
    *timeout_ms = 0;
  } else if (earliest == kNever) {
    *timeout_ms = -1;
  } else {
    // Rounded up: waking a little late is harmless, early would spin.
    *timeout_ms = static_cast<int>(
        std::min<int64_t>((earliest - now + 999999) / 1000000, 60 * 60 * 1000));
  }
  return due;
}

void WatchCore::Mark(const KernelEvents::Fired& fired) {
  for (const std::shared_ptr<WatchEntry>& e : entries_) {
    bool hit = fired.overflow;
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

void WatchCore::Service(WatchEntry& entry, int64_t now) {
  std::unique_lock<std::mutex> turn = ReportTurn(entry);
  if (entry.finished) return;
  bool renew;
  {
    std::lock_guard<std::mutex> guard(mu_);
    if (entry.done) return;
    renew = entry.next_renew <= now;
    entry.check_now = false;
  }
  std::optional<LossReport> loss;
  int64_t next_renew = kNever;
  bool still_watched = false;
  {
    std::lock_guard<std::mutex> guard(entry.mu);
    loss = CheckLocked(entry, renew);
    if (entry.lock && !entry.lost) {
      still_watched = true;
      next_renew = NextRenewal(*entry.lock);
      if (renew && entry.lock->store().capabilities().expiring &&
          entry.lock->RemainingLifetime() < entry.lock->options().ttl / 2) {
        // The renewal did not take: try again soon while the lease lasts.
        next_renew = std::min(next_renew, Now() + kRenewRetryNanos);
      }
    }
  }
  {
    std::lock_guard<std::mutex> guard(mu_);
    if (still_watched) {
      entry.next_check = Now() + entry.interval_nanos;
      entry.next_renew = next_renew;
      entry.poll_quiet = false;
    } else {
      entry.next_check = kNever;
      entry.next_renew = kNever;
      entry.poll_quiet = true;
    }
  }
  if (loss) Report(entry, *loss);
}

absl::Status WatchCore::CheckNow(WatchEntry& entry) {
  std::unique_lock<std::mutex> turn = ReportTurn(entry);
  std::optional<LossReport> loss;
  absl::Status result;
  {
    std::lock_guard<std::mutex> guard(entry.mu);
    if (!entry.lock) {
      return absl::FailedPreconditionError(
          "ipclock: WatchedLock::CheckNow on a lock already released, taken back "
          "or moved from");
    }
    loss = CheckLocked(entry, /*renew=*/false);
    if (entry.lost) {
      result = entry.error;
    } else if (!entry.lock->is_acquired()) {
      result = absl::FailedPreconditionError("ipclock: the watched lock is not held");
    }
  }
  if (loss) Report(entry, *loss);
  return result;
}

void WatchCore::Run() {
  for (;;) {
    std::vector<int> poll_fds;
    int timeout_ms = -1;
    std::vector<std::shared_ptr<WatchEntry>> due;
    {
      std::lock_guard<std::mutex> guard(mu_);
      if (stop_) return;
      due = Plan(Now(), &poll_fds, &timeout_ms);
    }
    if (due.empty()) {
      // events_ is set before the thread starts and replaced only in a
      // child, where this thread does not exist.
      KernelEvents::Fired fired = events_->Wait(poll_fds, timeout_ms);
      std::lock_guard<std::mutex> guard(mu_);
      Mark(fired);
      continue;
    }
    const int64_t now = Now();
    for (const std::shared_ptr<WatchEntry>& e : due) Service(*e, now);
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

std::optional<Lock> WatchedLock::Finish(absl::Status* found_lost) {
  if (entry_ == nullptr) return std::nullopt;
  // Out of the watch first, so that no check starts on a lock being released.
  core_->Remove(entry_.get());
  {
    // Waits for a check or report under way; none starts after this.
    std::unique_lock<std::mutex> turn = internal::ReportTurn(*entry_);
    entry_->finished = true;
  }
  std::optional<Lock> lock;
  {
    std::lock_guard<std::mutex> guard(entry_->mu);
    lock.swap(entry_->lock);
    if (found_lost != nullptr && entry_->lost) *found_lost = entry_->error;
  }
  entry_.reset();
  core_.reset();
  return lock;
}

bool WatchedLock::lost() const {
  if (entry_ == nullptr) return false;
  std::lock_guard<std::mutex> guard(entry_->mu);
  return entry_->lost;
}

absl::Status WatchedLock::status() const {
  if (entry_ == nullptr) return absl::OkStatus();
  std::lock_guard<std::mutex> guard(entry_->mu);
  return entry_->error;
}

absl::Status WatchedLock::CheckNow() {
  if (entry_ == nullptr) {
    return absl::FailedPreconditionError(
        "ipclock: WatchedLock::CheckNow on a moved-from WatchedLock");
  }
  return core_->CheckNow(*entry_);
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
  std::lock_guard<std::mutex> guard(entry_->mu);
  return entry_->lock ? entry_->lock->fence() : std::nullopt;
}

absl::Duration WatchedLock::RemainingLifetime() const {
  if (entry_ == nullptr) return absl::ZeroDuration();
  std::lock_guard<std::mutex> guard(entry_->mu);
  return entry_->lock ? entry_->lock->RemainingLifetime() : absl::ZeroDuration();
}

// --- LockWatch -------------------------------------------------------------------

LockWatch& LockWatch::Default() {
  static LockWatch* watch = new LockWatch();
  return *watch;
}

LockWatch::LockWatch() : core_(std::make_shared<internal::WatchCore>()) {}

LockWatch::~LockWatch() { core_->Stop(); }

absl::StatusOr<WatchedLock> LockWatch::Watch(Lock lock, const WatchOptions& options) {
  // The watch owns the release from now on: a LockGuard on the lock would
  // release it behind the watch's back.
  internal::LockAccess::DetachGuard(lock);
  if (!lock.is_acquired()) {
    return absl::FailedPreconditionError(
        absl::StrCat("ipclock: LockWatch::Watch: resource ",
                     QuoteResource(lock.resource()), ": the lock is not held"));
  }
  if (options.check_interval < absl::Milliseconds(1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ipclock: LockWatch::Watch: check_interval ",
                     absl::FormatDuration(options.check_interval),
                     " is below 1ms"));
  }
  auto entry = std::make_shared<internal::WatchEntry>(std::move(lock), options);
  entry->interval_nanos = absl::ToInt64Nanoseconds(options.check_interval);
  if (absl::Status s = core_->Add(entry); !s.ok()) return s;
  return WatchedLock(std::move(entry), core_);
}

}  // namespace ipclock
