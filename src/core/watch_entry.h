// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// One lock in a watch's care (watch_core.h): the Lock, what the checks
// found, and what the event thread plans for it.

#ifndef IPCLOCK_CORE_WATCH_ENTRY_H_
#define IPCLOCK_CORE_WATCH_ENTRY_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "ipclock/diagnostics.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/spi/store_interface.h"
#include "platform/process_id.h"

namespace ipclock {
namespace internal {

inline constexpr int64_t kNever = INT64_MAX;

inline int64_t Now() { return Deadline::NowNanos(); }

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
  // (WatchedLock, lock_watch.cc).
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

}  // namespace internal
}  // namespace ipclock

#endif  // IPCLOCK_CORE_WATCH_ENTRY_H_
