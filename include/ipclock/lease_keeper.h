// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: lease_keeper.h
// -----------------------------------------------------------------------------
//
// A `LeaseKeeper` keeps the leases of held locks alive while the program
// lives: one background thread per keeper refreshes each lock it keeps at a
// third of its TTL, so a lock on an expiring store (Redis, PostgreSQL with a
// lease, in-memory) outlasts a long job without the job calling
// `Lock::Refresh()`, and still runs out soon after the process dies.
//
// Example:
//
//   ipclock::LeaseKeeper keeper;
//   ABSL_ASSIGN_OR_RETURN(ipclock::Lock lock, factory.CreateLock("export"));
//   ABSL_RETURN_IF_ERROR(lock.Acquire(absl::Seconds(10)));
//   ABSL_ASSIGN_OR_RETURN(ipclock::KeptLock kept, keeper.Keep(std::move(lock)));
//   for (const Row& row : rows) {
//     if (kept.lost()) return kept.status();  // stop writing: not ours now
//     Write(row);
//   }
//   return kept.Release();
//
// Contract. A `Lock` is not thread-safe, so the keeper does not refresh a
// lock the owner can still touch: `Keep()` takes the Lock over, and from then
// on the owner goes through the returned `KeptLock`, whose calls and the
// keeper's refreshes take turns on one mutex per lock. (Refreshing a
// serialized copy of the Key instead would leave the owner's Key with a
// stale lease and does not work for stores whose keys cannot be serialized,
// such as in-memory.) `KeptLock::Take()` ends the keeping and hands the Lock
// back.
//
// A refresh that fails (the server is unreachable, the lease had already run
// out and the store let someone else in) marks the lock lost: `lost()` turns
// true, `status()` says why, the `on_lost` callback runs once, and the
// keeper stops refreshing that lock. It does not release it: the owner
// decides, and `Release()` then reports the lease overrun if there was one.
//
// Locks on stores without leases may be kept; they are never refreshed.
//
// A `LeaseKeeper` is thread-safe. Destroy the `KeptLock`s before their
// keeper, or they stay usable but are no longer refreshed.

#ifndef IPCLOCK_LEASE_KEEPER_H_
#define IPCLOCK_LEASE_KEEPER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"

namespace ipclock {

namespace internal {
struct KeptEntry;
struct KeeperCore;
}  // namespace internal

struct LostLease {
  std::string store;     // Store::Describe() of the lock's store
  std::string resource;  // the resource name
  absl::Status error;    // what the failed refresh returned
};

struct LeaseKeeperOptions {
  // Runs once per lost lock, on the keeper's thread, with no keeper or
  // KeptLock mutex held: it may call the KeptLock (e.g. Release()), but it
  // must not destroy the keeper, and it delays the refreshes of every other
  // lock of this keeper while it runs.
  std::function<void(const LostLease&)> on_lost;
};

// A lock handed to a `LeaseKeeper`. Movable, not copyable. Its methods may be
// called from any thread. Destroying it ends the keeping and destroys the
// Lock, which releases it unless `LockOptions::auto_release` is off.
class KeptLock {
 public:
  KeptLock() = default;
  KeptLock(KeptLock&&) noexcept;
  KeptLock& operator=(KeptLock&&) noexcept;
  KeptLock(const KeptLock&) = delete;
  KeptLock& operator=(const KeptLock&) = delete;
  ~KeptLock();

  // True once a refresh failed: another holder may have the lock now.
  bool lost() const;
  // OK, or the error of the refresh that lost the lock.
  absl::Status status() const;

  // Ends the keeping and releases the lock (see Lock::Release(), which
  // reports a lease that ran out first). FailedPrecondition if this KeptLock
  // was released, taken back or moved from.
  absl::Status Release();

  // Ends the keeping and returns the Lock, which the caller refreshes from
  // then on. FailedPrecondition as for Release().
  absl::StatusOr<Lock> Take();

  // Fencing token of the kept acquisition (stores with `fencing`).
  std::optional<uint64_t> fence() const;
  // Time left on the lease as last refreshed; infinite without one.
  absl::Duration RemainingLifetime() const;

 private:
  friend class LeaseKeeper;
  KeptLock(std::shared_ptr<internal::KeptEntry> entry,
           std::shared_ptr<internal::KeeperCore> core);
  // Marks the entry done and moves its Lock out; empty if already done.
  std::optional<Lock> Finish();

  std::shared_ptr<internal::KeptEntry> entry_;
  std::shared_ptr<internal::KeeperCore> core_;
};

class LeaseKeeper {
 public:
  explicit LeaseKeeper(LeaseKeeperOptions options = LeaseKeeperOptions());
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;
  // Stops and joins the thread. Locks still kept are not released.
  ~LeaseKeeper();

  // Takes `lock` over and refreshes it from now on (the first time within a
  // third of its TTL or of its remaining lease, whichever is shorter).
  // FailedPrecondition if the lock is not acquired. The thread starts with
  // the first lock kept.
  absl::StatusOr<KeptLock> Keep(Lock lock);

 private:
  std::shared_ptr<internal::KeeperCore> core_;
  std::thread thread_;
};

}  // namespace ipclock

#endif  // IPCLOCK_LEASE_KEEPER_H_
