// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: lock.h
// -----------------------------------------------------------------------------
//
// `ipclock::Lock` is a named lock held by this process: what programs create
// (usually through `LockFactory`), acquire, and release.
//
// Example:
//
//   ABSL_ASSIGN_OR_RETURN(auto store, ipclock::StoreFromDsn("flock"));
//   ipclock::LockFactory factory(store);
//   ABSL_ASSIGN_OR_RETURN(ipclock::Lock lock, factory.CreateLock("invoice-42"));
//   absl::StatusOr<bool> got = lock.TryAcquire();
//   if (!got.ok()) return got.status();   // the store failed
//   if (!*got) return Busy();             // someone else holds it
//   ...                                   // released when `lock` is destroyed
//
// Acquisition comes in three forms: `TryAcquire()` tries once and returns
// false when another holder has the lock; `Acquire(timeout)` waits up to
// `timeout` and returns DeadlineExceeded if it ran out; `Acquire()` waits for
// as long as it takes. Each takes a `LockMode` (exclusive by default; shared
// where the store has shared locks). Waits sleep until the holder releases
// on every store with the `blocking` capability; they never spin.
//
// A Lock is released when it is destroyed, unless `LockOptions::auto_release`
// is false (to keep a lock past the object, e.g. one handed to another
// process by `Key::Serialize()`). A Lock is movable, not copyable, and not
// thread-safe: use one Lock from one thread at a time. Locks on the same
// resource in one process exclude each other exactly as locks in different
// processes do, on every store.

#ifndef IPCLOCK_LOCK_H_
#define IPCLOCK_LOCK_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/key.h"
#include "ipclock/store.h"

namespace ipclock {

struct LockOptions {
  // Lease length on expiring stores (Symfony's default, 300 s); ignored by
  // stores without the `expiring` capability. `absl::InfiniteDuration()`
  // asks for no lease, which expiring stores may refuse.
  absl::Duration ttl = absl::Seconds(300);
  // Release on destruction.
  bool auto_release = true;
  // Holders allowed at once on counting stores; 1 everywhere else.
  uint32_t permits = 1;
  KeyOptions key_options;
};

class Lock {
 public:
  // Makes a lock on `resource` in `store`. InvalidArgument for a bad
  // resource name or options the store cannot honour.
  static absl::StatusOr<Lock> Create(std::shared_ptr<Store> store,
                                     absl::string_view resource,
                                     const LockOptions& options = LockOptions());

  // Wraps an existing key (e.g. one from `Key::Deserialize()`); the lock
  // counts as acquired if `acquired` is true.
  Lock(std::shared_ptr<Store> store, Key key, const LockOptions& options,
       bool acquired = false);

  Lock(Lock&& other) noexcept;
  Lock& operator=(Lock&& other) noexcept;
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
  // Releases the lock if it is held and `auto_release` is on. Errors are
  // dropped here; call `Release()` to see them.
  ~Lock();

  // Tries once. True if this lock now holds the resource, false if another
  // holder has it; an error status if the store failed.
  absl::StatusOr<bool> TryAcquire(LockMode mode = LockMode::kExclusive);

  // Waits up to `timeout` (forever by default). OK once held;
  // DeadlineExceeded if another holder still had it when `timeout` ran out;
  // another error status if the store failed.
  absl::Status Acquire(absl::Duration timeout = absl::InfiniteDuration(),
                       LockMode mode = LockMode::kExclusive);

  // Extends the lease to `ttl` from now (the lock's TTL if omitted). A no-op
  // on stores without leases. Aborted if the lease had already run out: the
  // lock may have been taken by someone else in between.
  absl::Status Refresh(std::optional<absl::Duration> ttl = std::nullopt);

  // Releases the lock. OK if it was not held. Aborted if the lease ran out
  // before this call (the lock is released all the same): the lease-overrun
  // handler is told too, once per lock, also when the destructor releases
  // (see lease_overrun.h).
  absl::Status Release();

  // Whether this object believes it holds the lock (it acquired and has not
  // released). Costs nothing; see `CheckAcquired()` to ask the store.
  bool is_acquired() const { return acquired_; }

  // Asks the store whether the lock is still held (a lease may have run out,
  // a server connection may be lost).
  absl::StatusOr<bool> CheckAcquired();

  bool IsExpired() const { return key_.IsExpired(); }
  // Time left on the lease; infinite on stores without leases.
  absl::Duration RemainingLifetime() const { return key_.RemainingLifetime(); }

  // Fencing token of the current acquisition (stores with `fencing`).
  std::optional<uint64_t> fence() const { return key_.fence(); }
  // Whether the previous holder died holding the lock (stores with
  // `owner_death`).
  bool previous_owner_died() const { return key_.previous_owner_died(); }

  LockMode mode() const { return mode_; }
  const Key& key() const { return key_; }
  Key& mutable_key() { return key_; }
  Store& store() const { return *store_; }
  const LockOptions& options() const { return options_; }

 private:
  absl::StatusOr<bool> AcquireUntil(Deadline deadline, LockMode mode);
  absl::Status CheckMode(LockMode mode) const;
  // Release() without the lease-overrun report.
  absl::Status DeleteFromStore();

  std::shared_ptr<Store> store_;
  Key key_;
  LockOptions options_;
  LockMode mode_ = LockMode::kExclusive;
  Capabilities caps_;
  bool acquired_ = false;
};

}  // namespace ipclock

#endif  // IPCLOCK_LOCK_H_
