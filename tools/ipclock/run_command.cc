// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock run`: acquire (trying again while the store is unreachable, for
// as long as -w allows), watch every lock while COMMAND runs, stop COMMAND
// if one is lost, release.

#include "run_command.h"

#include <stdlib.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "child_process.h"
#include "exit_codes.h"
#include "terminal_text.h"
#include "priority_lend.h"
#include "ipclock/errors.h"
#include "run_report.h"
#include "wait_signals.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/stores/etcd_store.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/stores/slot_semaphore_store.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store_factory.h"

namespace ipclock_cli {

namespace {

// Backoff between attempts on a store that cannot be reached.
constexpr absl::Duration kFirstRetry = absl::Milliseconds(50);
constexpr absl::Duration kMaxRetry = absl::Seconds(1);
// How long COMMAND runs before the watch of locks without leases starts
// (at most --check-interval): see RunCommand.
constexpr absl::Duration kWatchAfter = absl::Milliseconds(50);

void PrintError(const absl::Status& status) { ipclock_cli::PrintError("ipclock", status); }


std::string Millis(int64_t nanos) {
  return absl::StrCat(static_cast<double>(nanos / 1000) / 1000.0, " ms");
}

std::string WithoutPrefix(absl::string_view message) {
  absl::ConsumePrefix(&message, "ipclock: ");
  return std::string(message);
}

// -w bounds the time to get the locks, whatever keeps them from us: a
// holder, or a server that is down or not yet up. Only a transient failure
// (ipclock/errors.h) is tried again; -n and -w 0 try once.
//
// Without -w the run waits for the lock as long as it takes, but not for a
// store that has not answered yet: a server that cannot be reached at the
// start (a wrong port or host name looks the same as a server that is
// down) would keep the run waiting forever on what may be a typo. Once the
// store has answered, a server that goes away (a restart while we wait
// behind a holder) is waited out, as the configuration was right.
class Retry {
 public:
  Retry(const RunOptions& options, ipclock::Deadline deadline)
      : options_(options), deadline_(deadline) {}

  // The store answered a try for a lock (held or busy).
  void Answered() { answered_ = true; }

  // Whether to try again after `*s`, having slept first. When the answer is
  // no only because no -w was given, `*s` says so.
  bool Again(absl::Status* s) {
    if (!ipclock::IsTransient(*s) || options_.wait == absl::ZeroDuration() ||
        deadline_.has_passed() || WaitSignalReceived() != 0) {
      return false;
    }
    if (deadline_.is_never() && !answered_) {
      *s = absl::Status(s->code(),
                        absl::StrCat(s->message(),
                                     "; not waited for, as the store has not answered "
                                     "yet: give -w SECS to wait for a server that is "
                                     "starting"));
      return false;
    }
    if (!said_) {
      // Once: a run that waits should say on what.
      Say(absl::StrCat(WithoutPrefix(s->message()), "; trying again ",
                       deadline_.is_never() ? "for as long as it takes (no -w given)"
                                            : "until the wait (-w) runs out"));
      said_ = true;
    }
    SleepUnlessSignalled(std::min(next_, deadline_.Remaining()));
    next_ = std::min(next_ * 2, kMaxRetry);
    return WaitSignalReceived() == 0;
  }

 private:
  const RunOptions& options_;
  const ipclock::Deadline deadline_;
  absl::Duration next_ = kFirstRetry;
  bool said_ = false;
  bool answered_ = false;
};

absl::StatusOr<std::shared_ptr<ipclock::Store>> OpenStore(const RunOptions& options,
                                                          Retry& retry) {
  if (!options.file.empty()) {
    ipclock::FlockStoreOptions flock_options;
    flock_options.naming = ipclock::FlockStoreOptions::Naming::kPath;
    return ipclock::NewFlockStore(flock_options);
  }
  const absl::string_view dsn =
      options.store_dsn.empty() ? ipclock::kDefaultDsn : absl::string_view(options.store_dsn);
  // What the run asks of the store is checked with the DSN, before any
  // server is tried: a store that cannot do it fails at once.
  ipclock::StoreOptions store_options;
  store_options.shared_locks = options.mode == ipclock::LockMode::kShared;
  store_options.permits = options.permits;
  store_options.lease = options.ttl;
  for (;;) {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> store =
        ipclock::StoreFromDsn(dsn, store_options);
    if (store.ok()) return store;
    absl::Status failed = store.status();
    if (!retry.Again(&failed)) return failed;
  }
}

// Takes `lock` by `deadline`. Returns nullopt once held, else the exit
// status to leave with.
std::optional<int> AcquireOne(ipclock::Lock& lock, const RunOptions& options,
                              ipclock::Deadline deadline, Retry& retry, RunReport& report) {
  const std::string name = QuotedPrintable(lock.resource());
  if (options.verbose) {
    const bool shared = options.mode == ipclock::LockMode::kShared;
    SayInfo(absl::StrCat(
        "acquiring ", options.limit > 0 ? "" : shared ? "shared lock on " : "exclusive lock on ",
        WhatText(options, lock), " in ", lock.store().Describe(), " (",
        options.wait == absl::ZeroDuration() ? "trying once"
        : options.wait == absl::InfiniteDuration()
            ? "waiting as long as it takes"
            : absl::StrCat("waiting up to ", absl::FormatDuration(options.wait)),
        ")"));
  }
  const int64_t start = ipclock::Deadline::NowNanos();
  absl::Status status;
  do {
    if (options.wait == absl::ZeroDuration()) {
      absl::StatusOr<bool> got = lock.TryAcquire(options.mode);
      status = !got.ok() ? got.status()
               : *got    ? absl::OkStatus()
                         : absl::DeadlineExceededError("busy");
    } else {
      status = lock.Acquire(
          deadline.is_never() ? absl::InfiniteDuration() : deadline.Remaining(), options.mode);
    }
    if (status.ok() || status.code() == absl::StatusCode::kDeadlineExceeded) retry.Answered();
  } while (retry.Again(&status));
  report.DoneWaiting();
  if (const int sig = WaitSignalReceived(); sig != 0 && !status.ok()) {
    // The wait has left the store's queue (wait_signals.h); the caller lets
    // go of the locks it holds, and main() dies by the signal.
    if (options.verbose) {
      SayInfo(absl::StrCat("signal ", sig, " while waiting for ", name,
                           ": left the queue without the lock"));
    }
    return kExitSignalBase + sig;
  }
  const int64_t took = ipclock::Deadline::NowNanos() - start;
  if (status.code() == absl::StatusCode::kDeadlineExceeded) {
    // Silent by default, as flock(1) is: a busy lock is an expected outcome.
    if (options.verbose) {
      SayInfo(absl::StrCat(name, " is held by another owner; gave up after ", Millis(took)));
    }
    return options.conflict_exit_code;
  }
  if (!status.ok()) {
    PrintError(status);
    return ExitCodeForStatus(status);
  }
  report.Acquired(lock, absl::Nanoseconds(took));
  return std::nullopt;
}

// Releases in the reverse of the acquisition order (locks not yet watched).
void ReleaseAll(std::vector<ipclock::Lock>& locks) {
  for (auto it = locks.rbegin(); it != locks.rend(); ++it) {
    if (it->is_acquired()) it->Release().IgnoreError();
  }
}

// The command learns what it holds through its environment. Values from an
// enclosing `ipclock run` are cleared, not inherited, where this run has
// none of its own.
void ExportLockEnvironment(const std::vector<ipclock::Lock>& locks,
                           const ipclock::Store& store) {
  std::vector<absl::string_view> resources;
  bool died = false;
  for (const ipclock::Lock& lock : locks) {
    resources.push_back(lock.resource());
    died = died || lock.previous_owner_died();
  }
  setenv("IPCLOCK_RESOURCE", locks.front().resource().c_str(), 1);
  setenv("IPCLOCK_RESOURCES", absl::StrJoin(resources, "\n").c_str(), 1);
  setenv("IPCLOCK_STORE", store.Describe().c_str(), 1);
  if (std::optional<uint64_t> fence = locks.front().fence()) {
    setenv("IPCLOCK_FENCE", absl::StrCat(*fence).c_str(), 1);
  } else {
    unsetenv("IPCLOCK_FENCE");
  }
  // A slot semaphore's slots: slot K is the lock RESOURCE_K.
  if (std::vector<uint32_t> slots = locks.front().slots(); !slots.empty()) {
    setenv("IPCLOCK_SLOTS", absl::StrJoin(slots, " ").c_str(), 1);
  } else {
    unsetenv("IPCLOCK_SLOTS");
  }
  if (died) {
    setenv("IPCLOCK_PREVIOUS_OWNER_DIED", "1", 1);
  } else {
    unsetenv("IPCLOCK_PREVIOUS_OWNER_DIED");
  }
  // Under the names and meanings `etcdctl lock` gives its command (the
  // revision is the fence), so that scripts written for it run unchanged.
  // Removed on other stores: a script that fences with ETCD_LOCK_REV would
  // otherwise take whatever the caller's environment says (an enclosing
  // `etcdctl lock`, or anyone who set them) for this lock's fence.
  if (std::optional<ipclock::EtcdHeldKey> etcd = ipclock::EtcdHeldKeyOf(locks.front())) {
    setenv("ETCD_LOCK_KEY", etcd->key.c_str(), 1);
    setenv("ETCD_LOCK_REV", absl::StrCat(etcd->revision).c_str(), 1);
  } else {
    unsetenv("ETCD_LOCK_KEY");
    unsetenv("ETCD_LOCK_REV");
  }
}

// The losses the watch reports, from its thread, for the main thread to
// tell. Each is printed once, with the lock's fence (the watch's report has
// none), as the acquisition was.
class LossLog {
 public:
  // Before the watch starts: the fence of each lock it will follow.
  void SetFences(const std::vector<ipclock::Lock>& locks) {
    std::lock_guard<std::mutex> guard(mu_);
    for (const ipclock::Lock& lock : locks) {
      fences_.emplace(std::make_pair(lock.store().Describe(), lock.resource()), lock.fence());
    }
  }
  void Add(const ipclock::Diagnostic& loss) {
    std::lock_guard<std::mutex> guard(mu_);
    losses_.push_back(loss);
  }
  // Prints the losses not printed yet.
  void PrintNew() {
    std::lock_guard<std::mutex> guard(mu_);
    for (; printed_ < losses_.size(); ++printed_) {
      ipclock::Diagnostic loss = losses_[printed_];
      loss.text = absl::StrCat("lost a held lock: ", WithoutPrefix(loss.status.message()));
      if (!loss.fence) {
        auto it = fences_.find(std::make_pair(loss.store, loss.resource));
        if (it != fences_.end()) loss.fence = it->second;
      }
      Tell(std::move(loss));
    }
  }
  // What the last loss said, for the service manager's status line.
  std::string LastText() {
    std::lock_guard<std::mutex> guard(mu_);
    return losses_.empty() ? std::string() : WithoutPrefix(losses_.back().status.message());
  }
  bool Has(const std::string& store, const std::string& resource) {
    std::lock_guard<std::mutex> guard(mu_);
    for (const ipclock::Diagnostic& l : losses_) {
      if (l.store == store && l.resource == resource) return true;
    }
    return false;
  }
  bool empty() {
    std::lock_guard<std::mutex> guard(mu_);
    return losses_.empty();
  }

 private:
  std::mutex mu_;
  std::vector<ipclock::Diagnostic> losses_;  // guarded by mu_
  size_t printed_ = 0;                     // guarded by mu_
  // (store, resource) -> fence; guarded by mu_
  std::map<std::pair<std::string, std::string>, std::optional<uint64_t>> fences_;
};

std::string SecondsText(absl::Duration d) { return absl::FormatDuration(d); }

void SayStop(const StopPlan& plan) {
  if (!plan.started) {
    Say("COMMAND was not started");
    return;
  }
  const std::string whom = plan.own_group ? absl::StrCat("its process group ", -plan.target)
                                          : absl::StrCat("pid ", plan.target);
  if (plan.kill_after <= absl::ZeroDuration()) {
    Say(absl::StrCat("stopping COMMAND: SIGKILL to ", whom), ipclock::DiagnosticSeverity::kError);
  } else {
    Say(absl::StrCat("stopping COMMAND: SIGTERM to ", whom, ", SIGKILL in ",
                     SecondsText(plan.kill_after), " if it has not ended"),
        ipclock::DiagnosticSeverity::kError);
  }
}

std::string StatusText(int status) {
  if (status > kExitSignalBase && status < kExitSignalBase + 65) {
    return absl::StrCat("was killed by signal ", status - kExitSignalBase);
  }
  return absl::StrCat("exited with ", status);
}

// What keeps COMMAND from running on unlocked once ipclock alone is killed.
// On flock, COMMAND inherits the lock files' descriptors, as under flock(1)
// without -o: the locks then last until COMMAND (and whatever it started
// that kept them) ends, and the next holder waits for it. Elsewhere (and
// with -o) a lock cannot outlive ipclock in COMMAND's hands (a robust
// mutex, a semaphore's undo, a database session, a lease renewed by
// ipclock), so COMMAND gets SIGKILL when ipclock dies.
void BindCommandToLocks(const std::vector<ipclock::Lock>& locks, const RunOptions& options,
                        const std::vector<int>& inherited, ChildRunner& runner) {
  std::vector<int> lock_fds;
  if (!options.close_lock) {
    for (const ipclock::Lock& lock : locks) {
      const int fd = ipclock::FlockDescriptorOf(lock);
      if (fd < 0) {
        lock_fds.clear();
        break;
      }
      lock_fds.push_back(fd);
    }
  }
  std::sort(lock_fds.begin(), lock_fds.end());
  runner.set_die_with_parent(lock_fds.empty());
  runner.set_descriptors(inherited, std::move(lock_fds));
}

}  // namespace

int RunCommand(const RunOptions& options, const sigset_t& child_mask,
               const std::vector<int>& inherited) {
  InstallWaitSignals();
  // One deadline for the store and all the locks: -w bounds the whole
  // acquisition.
  const ipclock::Deadline deadline = ipclock::Deadline::In(options.wait);
  Retry retry(options, deadline);
  RunReport report(options);
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(options, retry);
  if (!store.ok()) {
    PrintError(store.status());
    return ExitCodeForStatus(store.status());
  }
  // --limit: counted natively where the store can, else in slot locks.
  if (options.limit > 0) *store = ipclock::SemaphoreStoreFor(*std::move(store));
  const ipclock::Capabilities caps = (*store)->capabilities();
  if (options.mode == ipclock::LockMode::kShared && !caps.shared) {
    // As --permits on a store that does not count: a usage error.
    ipclock_cli::PrintError("ipclock run",
                            absl::InvalidArgumentError(absl::StrCat(
                                "-s: ", (*store)->Describe(),
                                " has no shared locks (use -x, or a store with shared "
                                "locks such as flock)")));
    return kExitUsage;
  }
  if (options.verbose && !caps.expiring) {
    SayInfo(absl::StrCat((*store)->Describe(), " has no leases: its locks end with this process, "
                                           "and --ttl has no effect"));
  }
  const std::vector<std::string> resources =
      options.file.empty() ? options.keys : std::vector<std::string>{options.file};

  ipclock::LockOptions lock_options;
  lock_options.permits = options.limit > 0 ? options.limit : options.permits;
  lock_options.weight = options.weight;
  lock_options.ttl = options.ttl;
  // The Lock's one try found the lock held: the store has answered, which
  // a wait behind a holder would not tell Retry until it ends, and there
  // is a wait to report (run_report.h).
  lock_options.on_wait = [&retry, &report](const ipclock::Lock& lock) {
    retry.Answered();
    if (report.WantsWaiting()) report.Waiting(lock);
  };
  // A store whose waiters keep a place in its queue: a signal while we
  // wait cancels the wait, so that it leaves the queue (wait_signals.h).
  // Without a canceller (no descriptor left), the signal kills at once.
  if (caps.cancellable) {
    absl::StatusOr<std::shared_ptr<ipclock::Canceller>> canceller = ipclock::Canceller::Create();
    if (canceller.ok()) lock_options.canceller = *std::move(canceller);
  }
  // Restores the dispositions before the canceller goes (declared after it).
  struct RestoreAtExit {
    ~RestoreAtExit() { RestoreWaitSignals(); }
  } restore_at_exit;
  std::vector<ipclock::Lock> locks;
  locks.reserve(resources.size());
  for (const std::string& resource : resources) {
    absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(*store, resource, lock_options);
    if (!lock.ok()) {
      PrintError(lock.status());
      return ExitCodeForStatus(lock.status());
    }
    locks.push_back(*std::move(lock));
  }
  if (lock_options.canceller != nullptr) DeferWaitSignals(lock_options.canceller.get());
  for (ipclock::Lock& lock : locks) {
    if (std::optional<int> failed = AcquireOne(lock, options, deadline, retry, report)) {
      ReleaseAll(locks);
      return *failed;
    }
  }
  // Held: a signal from now until COMMAND's runner takes the signals over
  // lets the locks go before ipclock dies by it.
  DeferWaitSignals(nullptr);
  ExportLockEnvironment(locks, **store);
  report.Held(locks);

  // Before the watch starts its thread, which must inherit the blocked
  // signals (see child_process.h).
  absl::StatusOr<std::unique_ptr<ChildRunner>> runner = ChildRunner::Create(child_mask);
  if (!runner.ok()) {
    PrintError(runner.status());
    ReleaseAll(locks);
    return kExitOsError;
  }
  BindCommandToLocks(locks, options, inherited, **runner);
  // Blocked now: whatever comes next is COMMAND's.
  RestoreWaitSignals();
  if (const int sig = WaitSignalReceived(); sig != 0) {
    ReleaseAll(locks);
    return kExitSignalBase + sig;
  }
  LossLog losses;
  ipclock::WatchOptions watch_options;
  watch_options.check_interval = options.check_interval;
  ChildRunner* const child = runner->get();
  watch_options.diagnostics = [&losses, child](const ipclock::Diagnostic& loss) {
    losses.Add(loss);
    child->RequestStop();
  };
  // The watch: its thread and, on file stores, an inotify instance.
  // Closing an inotify instance waits for the kernel's grace period, which
  // costs more than a short command, so on a store without leases the
  // watch starts only once COMMAND has run for a while (the first look
  // then sees a loss from before it, and the release sees one in a command
  // that ended sooner). A lease cannot wait: it is renewed from the start.
  std::optional<ipclock::LockWatch> watch;
  std::vector<ipclock::WatchedLock> watched;
  absl::Status watch_error;
  auto start_watch = [&]() -> absl::Status {
    losses.SetFences(locks);
    watch.emplace();
    for (ipclock::Lock& lock : locks) {
      absl::StatusOr<ipclock::WatchedLock> w = watch->Watch(std::move(lock), watch_options);
      if (!w.ok()) {
        watched.clear();  // released as they are destroyed
        ReleaseAll(locks);
        locks.clear();
        return w.status();
      }
      watched.push_back(*std::move(w));
    }
    locks.clear();  // all moved into the watch
    // A loss between the acquisition and the watch's first look.
    for (ipclock::WatchedLock& w : watched) w.CheckNow().IgnoreError();
    return absl::OkStatus();
  };
  absl::Duration watch_after = absl::ZeroDuration();
  if (caps.expiring) {
    if (absl::Status started = start_watch(); !started.ok()) {
      PrintError(started);
      return ExitCodeForStatus(started);
    }
  } else {
    watch_after = std::min(kWatchAfter, options.check_interval);
  }
  if (options.verbose) {
    // A store may hold a shorter lease than --ttl asks for (etcd's is the
    // DSN's): the watch renews at a third of the shorter. A store with
    // leases is watched from the start, so its locks are in the watch here.
    absl::Duration lease = options.ttl;
    if (caps.expiring && !watched.empty()) {
      lease = std::min(options.ttl,
                       absl::Ceil(watched.front().RemainingLifetime(), absl::Seconds(1)));
    }
    const size_t n = resources.size();
    SayInfo(absl::StrCat("watching ", n, n == 1 ? " lock" : " locks",
                         caps.expiring ? "" : absl::StrCat(" from ", SecondsText(watch_after),
                                                           " after COMMAND starts"),
                         ", checked every ", SecondsText(options.check_interval),
                         caps.expiring ? absl::StrCat(", lease ", SecondsText(lease),
                                                      " renewed every ", SecondsText(lease / 3))
                                       : ""));
  }

  (*runner)->set_on_started([&report](pid_t pid) { report.Running(pid); });
  // This thread holds the locks: a real-time waiter's priority is lent to
  // it, and from it to COMMAND (priority_lend.h).
  PriorityLender lender(caps.priority_inheritance, options.verbose);
  if (lender.active()) {
    (*runner)->set_every(PriorityLender::kLookEvery, [&lender]() { lender.Look(); });
  }
  const ChildResult result = (*runner)->Run(
      options.command, options.kill_after,
      [&](const StopPlan& plan) {
        losses.PrintNew();
        report.Lost(absl::StrCat("lost a held lock: ", losses.LastText(), "; stopping COMMAND"));
        SayStop(plan);
      },
      watch_after,
      [&]() {
        if (watch || !watch_error.ok()) return;
        watch_error = start_watch();
        // The locks are released: COMMAND must not go on.
        if (!watch_error.ok()) child->RequestStop();
      });
  // What COMMAND left running goes back to its own priority before the
  // release ends the loan.
  lender.Restore();
  if (!watch_error.ok()) {
    PrintError(watch_error);
    return ExitCodeForStatus(watch_error);
  }

  struct Released {
    std::string store;
    std::string resource;
    std::optional<uint64_t> fence;
    absl::Status status;
  };
  std::vector<Released> released;
  // A COMMAND killed by a signal died inside the locks, its work maybe half
  // done: they are let go as its death would have, so that the next holder
  // is told (IPCLOCK_PREVIOUS_OWNER_DIED). Not after a stop: those locks
  // were lost already.
  const bool died = result.signaled && !result.stopped;
  auto release = [&](ipclock::Lock& lock) {
    // Fields in order: the fence is read before the release.
    Released r{lock.store().Describe(), lock.resource(), lock.fence(),
               died ? lock.ReleaseAsDead() : lock.Release()};
    if (r.status.ok() && options.verbose) SayInfo(absl::StrCat("released ", QuotedPrintable(r.resource)));
    released.push_back(std::move(r));
  };
  for (auto it = watched.rbegin(); it != watched.rend(); ++it) {
    absl::StatusOr<ipclock::Lock> lock = it->Take();
    if (lock.ok()) release(*lock);
  }
  // Those of a command that ended before the watch started.
  for (auto it = locks.rbegin(); it != locks.rend(); ++it) release(*it);
  // Joins the watch's thread: no loss is reported after this.
  watch.reset();
  losses.PrintNew();

  bool lost = result.stopped || !losses.empty();
  absl::Status release_error;
  for (const Released& r : released) {
    if (absl::IsAborted(r.status)) {
      lost = true;
      if (!losses.Has(r.store, r.resource)) {
        ipclock::Diagnostic loss;
        loss.kind = ipclock::DiagnosticKind::kLockLost;
        loss.store = r.store;
        loss.resource = r.resource;
        loss.fence = r.fence;
        loss.text = absl::StrCat("the lock was found lost at its release: ",
                                 WithoutPrefix(r.status.message()));
        Tell(std::move(loss));
      }
    } else if (!r.status.ok()) {
      PrintError(r.status);
      if (release_error.ok()) release_error = r.status;
    }
  }
  if (lost) {
    const std::string why =
        absl::StrCat("exiting with status ", kExitLockLost, ": a lock was lost (COMMAND ",
                     result.started ? StatusText(result.status) : "was not started",
                     result.killed ? ", after SIGKILL" : "", ")");
    Say(why, ipclock::DiagnosticSeverity::kError);
    report.Lost(why);
    return kExitLockLost;
  }
  // As RunLocked does: a failed release outranks only a successful command.
  if (!release_error.ok() && result.status == 0) return ExitCodeForStatus(release_error);
  return result.status;
}

}  // namespace ipclock_cli
