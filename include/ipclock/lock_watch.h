// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: lock_watch.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/ipclock.h includes it).
//
// A held lock can be lost while its holder works: a tmp cleaner or an admin
// deletes its lock file or lock dir, systemd-logind's RemoveIPC removes its
// shared-memory segment or semaphore at logout, someone runs FLUSHALL on its
// Redis server, its database session is terminated, its lease runs out.
// Nothing can undo such a loss, but the holder must hear of it at once, so
// that it stops before another holder starts. A `LockWatch` watches held
// locks for the program:
//
//   * it asks each lock's store whether the lock is still held and still
//     the same lock (`Lock::CheckAcquired()`), every `check_interval` (1 s by
//     default), and at once when the kernel or the server reports something:
//     an inotify event on the lock file, its dir or the /dev/shm object, a
//     change of the process's mount table (for flock locks), a database
//     connection's socket closing. The checks of locks due within half an
//     interval of each other run together (early, never late). A lock whose
//     server or kernel tells of every loss (a Redis key followed by client
//     tracking, a ZooKeeper node watch and its session's events, a flock
//     lock on a local filesystem) is asked ten times less often while its
//     last check found it held: a safety net. A lock whose loss nothing
//     reports (a table store's row, a memcached key) is asked at least
//     every 100 ms, the store's bound, at one request a round for all of
//     the store's locks;
//   * it renews leases on expiring stores at a third of their length, so a
//     lock outlasts a long job and still runs out soon after its process
//     dies;
//   * when a lock is lost it says so: `WatchedLock::lost()` turns true,
//     `status()` names the store, the resource and what happened (Aborted),
//     and one `Diagnostic` of kind kLockLost goes to the watch's sink
//     (`WatchOptions::diagnostics`), else to the store's, else to the
//     process default (diagnostics.h: a warning on stderr unless the program
//     set another).
//
// Example:
//
//   absl::Status ExportAll(ipclock::Lock lock) {
//     absl::StatusOr<ipclock::WatchedLock> watched =
//         ipclock::LockWatch::Default().Watch(std::move(lock));
//     if (!watched.ok()) return watched.status();
//     for (int batch = 0; batch < 100; ++batch) {
//       if (watched->lost()) return watched->status();  // not ours any more
//       // ... write one batch ...
//     }
//     return watched->Release();
//   }
//
// One thread serves all the locks of a watch, sleeping in poll(2) between
// events and checks; `LockWatch::Default()` is one watch for the whole
// process, started with its first lock. The cost of a check is the store's:
// an fstat and a stat for a lock file, a system call for a semaphore, a
// round trip for a server. tools/bench measures the idle cost and the
// detection latency.
//
// Contract. A `Lock` is not thread-safe, so the watch takes the Lock over:
// `Watch()` moves it into a `WatchedLock`, whose calls and the watch's checks
// and renewals take turns on one mutex per lock. `WatchedLock::Take()` ends
// the watching and gives the Lock back. The watch never releases a lock: a
// lost lock stays the owner's to release (its release then returns Aborted),
// since only the owner knows when it has stopped using what the lock
// protected, and locks of the shm store may only be released by the thread
// that acquired them.
//
// What "at once" means for each store, and what each store cannot see, is
// in doc/reliability.md ("Losing a held lock").

#ifndef IPCLOCK_LOCK_WATCH_H_
#define IPCLOCK_LOCK_WATCH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/diagnostics.h"
#include "ipclock/lock.h"

namespace ipclock {

namespace internal {
struct WatchEntry;
class WatchCore;
}  // namespace internal

// The longest `WatchOptions::check_interval`: a year. The watch's sums of
// monotonic times and intervals (ten intervals, while a server tells of
// every loss) must not overflow, or a lease would go unrenewed.
inline constexpr absl::Duration kMaxCheckInterval = absl::Hours(24 * 366);

struct WatchOptions {
  // How often the store is asked when nothing is reported sooner. At least
  // 1 ms, at most kMaxCheckInterval.
  absl::Duration check_interval = absl::Seconds(1);
  // Gets one kLockLost `Diagnostic` per lost lock (diagnostics.h): its
  // `store`, `resource` and `status` (Aborted, saying what happened: e.g.
  // "lock file ... was deleted", "segment ... was removed", "the lease ran
  // out while ... could not be renewed: ..."). It runs on the watch's thread
  // (or in the thread that called `WatchedLock::CheckNow()` and found the
  // loss), with no watch or WatchedLock mutex held: it may call the
  // WatchedLock (e.g. `lost()`, or `Release()`), but must not destroy the
  // watch, and it delays the checks of other locks while it runs. It never
  // runs once the WatchedLock has been released, taken back or destroyed:
  // that call waits for a report under way, so what the sink uses may be
  // freed after it. Empty: the lock's store's sink, else the process
  // default.
  DiagnosticSink diagnostics;
};

// A lock handed to a `LockWatch`. Movable, not copyable. Its methods may be
// called from any thread. Destroying it ends the watching and destroys the
// Lock, which releases it unless `LockOptions::auto_release` is off.
//
// A fork()ed child's copy of a WatchedLock is the parent's, as a Lock's is:
// the watch's threads stayed with the parent, so the copy is not watched
// (`CheckNow()` is FailedPrecondition there), and its `lost()`, `Release()`,
// `Take()` and destructor neither wait for the parent's watch nor let go of
// what the parent holds (`Lock::Release()` says what a child's copy of a
// Lock does).
class WatchedLock {
 public:
  WatchedLock() = default;
  WatchedLock(WatchedLock&&) noexcept;
  WatchedLock& operator=(WatchedLock&&) noexcept;
  WatchedLock(const WatchedLock&) = delete;
  WatchedLock& operator=(const WatchedLock&) = delete;
  ~WatchedLock();

  // True once the watch found the lock lost: another holder may have it now.
  bool lost() const;
  // OK, or what the watch found (see `Diagnostic::status`).
  absl::Status status() const;

  // Asks the store now, as the watch would, and returns what it found. A
  // loss it returns has been reported (to the sink, as the watch reports
  // one) before it returns, whether this call or the watch found it.
  absl::Status CheckNow();

  // Ends the watching and releases the lock (see `Lock::Release()`: Aborted
  // for a lock that was lost, whether the watch or the release found it
  // out). FailedPrecondition if this WatchedLock was
  // released, taken back or moved from.
  absl::Status Release();

  // Ends the watching and returns the Lock. FailedPrecondition as for
  // `Release()`.
  absl::StatusOr<Lock> Take();

  std::optional<uint64_t> fence() const;
  // Time left on the lease as last renewed; infinite without one.
  absl::Duration RemainingLifetime() const;

 private:
  friend class LockWatch;
  WatchedLock(std::shared_ptr<internal::WatchEntry> entry,
              std::shared_ptr<internal::WatchCore> core);
  // Ends the watching and moves the Lock out; empty if already done.
  // `*found_lost`, if given, gets the loss the watch found, if any.
  std::optional<Lock> Finish(absl::Status* found_lost = nullptr);

  std::shared_ptr<internal::WatchEntry> entry_;
  std::shared_ptr<internal::WatchCore> core_;
};

class LockWatch {
 public:
  // The process's watch, made on first use and never destroyed.
  static LockWatch& Default();

  LockWatch();
  LockWatch(const LockWatch&) = delete;
  LockWatch& operator=(const LockWatch&) = delete;
  // Stops and joins the thread. Locks still watched are neither checked nor
  // renewed any more, and not released.
  ~LockWatch();

  // Takes `lock` over and watches it from now on (a `LockGuard` on it is left
  // holding nothing: the WatchedLock releases it). FailedPrecondition if the
  // lock is not held; InvalidArgument for a bad `check_interval`; an OS
  // error if the watch's thread or descriptors could not be made. On a
  // failure `lock` is left as it was, still held by the caller.
  absl::StatusOr<WatchedLock> Watch(Lock&& lock,
                                    const WatchOptions& options = WatchOptions());

 private:
  std::shared_ptr<internal::WatchCore> core_;
};

}  // namespace ipclock

#endif  // IPCLOCK_LOCK_WATCH_H_
