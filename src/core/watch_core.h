// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// WatchCore: the work of a LockWatch (include/ipclock/lock_watch.h).
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

#ifndef IPCLOCK_CORE_WATCH_CORE_H_
#define IPCLOCK_CORE_WATCH_CORE_H_

#include <pthread.h>
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "core/watch_entry.h"
#include "ipclock/spi/store_interface.h"
#include "platform/kernel_events.h"

namespace ipclock {
namespace internal {

// kWatchProbeInterval in nanoseconds: how often the probes of the watched
// locks run.
extern const int64_t kProbeNanos;

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

}  // namespace internal
}  // namespace ipclock

#endif  // IPCLOCK_CORE_WATCH_CORE_H_
