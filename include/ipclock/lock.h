// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: lock.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/ipclock.h includes it).
//
// `ipclock::Lock` is a named lock of this process: what programs create,
// acquire and release.
//
// Example:
//
//   absl::Status ExportInvoices() {
//     absl::StatusOr<std::shared_ptr<ipclock::Store>> store =
//         ipclock::StoreFromDsn("flock");
//     if (!store.ok()) return store.status();
//     absl::StatusOr<ipclock::Lock> lock =
//         ipclock::Lock::Create(*store, "invoice-export");
//     if (!lock.ok()) return lock.status();
//     absl::StatusOr<bool> got = lock->TryAcquire();
//     if (!got.ok()) return got.status();  // the store failed
//     if (!*got) return absl::OkStatus();  // another process is exporting
//     if (lock->previous_owner_died()) {
//       // The last exporter died holding the lock: check its output.
//     }
//     return absl::OkStatus();  // released when `lock` is destroyed
//   }
//
// Acquisition comes in three forms, each in a `LockMode` (exclusive by
// default; shared where the store has shared locks):
//
//   TryAcquire()          tries once: true if held, false if another holder
//                         has it.
//   TryAcquireFor(t)      waits up to `t`: true once held, false if another
//                         holder still had it when `t` ran out.
//   Acquire(t)            the same as a status: OK once held,
//                         DeadlineExceeded if the lock stayed busy for `t`
//                         (forever by default).
//
// Contention never looks like failure: DeadlineExceeded always means "the
// lock stayed busy"; a store that timed out (a server that did not answer)
// is Unavailable, and the other codes are the store's errors. Waits sleep
// until the holder releases on every store with the `blocking` capability;
// none spins. A wait that another thread or a signal handler must be able
// to end early takes a `Canceller` (below): it then ends with Cancelled.
//
// A Lock is released when it is destroyed, unless `LockOptions::auto_release`
// is false. It is movable (a `LockGuard` on it follows it), not copyable,
// and not thread-safe: use one Lock
// from one thread at a time (a `WatchedLock`, lock_watch.h, may be used from
// several). Locks on the same resource in one process exclude each other
// exactly as locks in different processes do, on every store. A Lock may be
// acquired and released many times; keeping one for a resource that is
// locked often is the fast path of every store (`LockGuard`, lock_guard.h,
// holds one for a scope). On the shm and flock stores, `TryAcquire()` and
// `Release()` of such a Lock cost a few instructions around the kernel
// primitive (doc/performance.md has the figures).
//
// A lock can be lost while held: its lock file deleted, its shared-memory
// segment or semaphore removed (systemd-logind's RemoveIPC does so at
// logout), its lease run out, its database session ended. `CheckAcquired()`
// asks the store; the watch of lock_watch.h asks on a timer and whenever the
// kernel or the server reports something, and tells the program.

#ifndef IPCLOCK_LOCK_H_
#define IPCLOCK_LOCK_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/key_options.h"
#include "ipclock/store.h"

namespace ipclock {

class Deadline;
class Key;
class LockGuard;

// Ends waits for locks early, from another thread or from a signal handler:
// a service told to stop while it waits for a lock, `ipclock run` on
// SIGTERM. Give it to the Locks whose waits it may end
// (`LockOptions::canceller`).
//
//   // Made before the handler is installed; the handler only calls Cancel().
//   std::shared_ptr<ipclock::Canceller> g_stop;
//   void OnSigterm(int) { g_stop->Cancel(); }
//
//   absl::Status WaitForTheLock(std::shared_ptr<ipclock::Store> store) {
//     absl::StatusOr<std::shared_ptr<ipclock::Canceller>> stop =
//         ipclock::Canceller::Create();
//     if (!stop.ok()) return stop.status();
//     g_stop = *stop;
//     signal(SIGTERM, OnSigterm);
//     ipclock::LockOptions options;
//     options.canceller = g_stop;
//     absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, "job", options);
//     if (!lock.ok()) return lock.status();
//     return lock->Acquire();  // Cancelled after a SIGTERM: not held, not queued
//   }
//
// Once cancelled it stays so: every wait of its Locks, under way or later,
// ends with Cancelled (`TryAcquireFor()` and `Acquire()` return that code; a
// try, which does not wait, still tries). The lock is then not held, and the
// wait has given up whatever it held in the store's queue (an etcd key and,
// with the store, its lease; a ZooKeeper node; a fair store's ticket), as a
// wait whose timeout ran out does: the next waiter is not held up by it.
// How soon a wait ends:
//   * on stores with the `cancellable` capability (store.h), whose waits
//     watch the canceller: at once on etcd and ZooKeeper; on flock and
//     posix-semaphore with fair=true, at once when Cancel() runs in a signal
//     handler on the waiting thread, else within their 100 ms slice;
//   * on other stores, within 200 ms: a Lock with a canceller waits there in
//     slices of 200 ms and looks between them. What those stores keep for a
//     waiter (a place in the kernel's or the server's queue) goes with the
//     process, so a program that is about to exit may just as well exit.
class Canceller {
 public:
  // An OS error if no eventfd can be made (the descriptor limit).
  static absl::StatusOr<std::shared_ptr<Canceller>> Create();

  Canceller(const Canceller&) = delete;
  Canceller& operator=(const Canceller&) = delete;
  ~Canceller();

  // Cancels every wait of the Locks that have this canceller, now and from
  // now on. Thread-safe, async-signal-safe, and idempotent.
  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  // A descriptor that turns readable once cancelled (an eventfd,
  // close-on-exec), for waits that poll. Owned by the canceller.
  int fd() const { return fd_; }

 private:
  explicit Canceller(int fd) : fd_(fd) {}
  std::atomic<bool> cancelled_{false};
  const int fd_;
};

namespace internal {
class LockAccess;
class MetricsCell;
}  // namespace internal

class Lock;

struct LockOptions {
  // Lease length on expiring stores (Symfony's default, 300 s); ignored by
  // stores without the `expiring` capability.
  absl::Duration ttl = absl::Seconds(300);
  // Release on destruction.
  bool auto_release = true;
  // Holders allowed at once on counting stores; 1 everywhere else (a store
  // that does not count refuses more with InvalidArgument).
  uint32_t permits = 1;
  // Permits this Lock takes of `permits`, all or none: 1 to `permits`; more
  // than 1 on stores with the `weighted` capability only (InvalidArgument
  // elsewhere). A semaphore of slot locks over any store takes weights
  // (ipclock/stores/slot_semaphore_store.h).
  uint32_t weight = 1;
  KeyOptions key_options;
  // Ends this Lock's waits when cancelled (see `Canceller` above); none by
  // default.
  std::shared_ptr<Canceller> canceller;
  // Called on the acquiring thread when an acquisition with a deadline
  // finds the resource held and begins to wait for it: at most once per
  // `Acquire()`/`TryAcquireFor()`, never for `TryAcquire()`, and not for a
  // lock acquired at once. For telling a person or a service manager what
  // the program waits for (`ipclock run` sets sd_notify's STATUS= here).
  // It runs before the wait, so it should be quick; it must not call this
  // Lock. The wait itself is unchanged: one try, then the store's wait.
  std::function<void(const Lock&)> on_wait;
};

class Lock {
 public:
  // Makes a lock on `resource` in `store`, not yet acquired. InvalidArgument
  // for a null store, a bad resource name (empty, or longer than
  // `key_options.max_resource_bytes`) or options the store cannot honour.
  static absl::StatusOr<Lock> Create(std::shared_ptr<Store> store,
                                     absl::string_view resource,
                                     const LockOptions& options = LockOptions());

  // Takes over a lock that was acquired elsewhere and handed over as the
  // text of `Serialize()`, on a store with the `serializable` capability.
  // The store is asked: the result is acquired only if the lock is held
  // with that owner token now (Aborted otherwise: the lock was released or
  // its lease ran out). InvalidArgument for text that `Serialize()` did not
  // produce or that was altered.
  static absl::StatusOr<Lock> FromSerialized(
      std::shared_ptr<Store> store, absl::string_view text,
      const LockOptions& options = LockOptions());

  Lock(Lock&& other) noexcept;
  Lock& operator=(Lock&& other) noexcept;
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
  // Releases the lock if it is held and `auto_release` is on. A failure is
  // dropped here; call `Release()` to see it.
  ~Lock();

  // Tries once. True if this lock now holds the resource, false if another
  // holder has it; an error status if the store failed.
  absl::StatusOr<bool> TryAcquire(LockMode mode = LockMode::kExclusive);

  // Waits up to `timeout`. True once held, false if another holder still
  // had it when `timeout` ran out; Cancelled if the Lock's canceller was
  // cancelled (see `Canceller`); an error status if the store failed.
  absl::StatusOr<bool> TryAcquireFor(absl::Duration timeout,
                                     LockMode mode = LockMode::kExclusive);

  // Waits up to `timeout` (forever by default). OK once held;
  // DeadlineExceeded if another holder kept it for all of `timeout`;
  // Cancelled if the Lock's canceller was cancelled; another code if the
  // store failed.
  absl::Status Acquire(absl::Duration timeout = absl::InfiniteDuration(),
                       LockMode mode = LockMode::kExclusive);

  // Extends the lease to `ttl` from now (the lock's TTL if omitted). A no-op
  // on stores without leases. Aborted if the lease had already run out: the
  // lock may have been taken by someone else in between.
  absl::Status Refresh(std::optional<absl::Duration> ttl = std::nullopt);

  // Releases the lock. OK if it was not held. Aborted if the lock was lost
  // while held (its lease ran out before this call, or its file, segment,
  // key or session went away): whatever it protected may have been touched
  // by another holder. The lock is released in every case.
  //
  // A fork()ed child's copy of its parent's held Lock is the parent's: its
  // Release(), ReleaseAsDead() and destructor let go of nothing (the parent
  // still holds the lock), and Release(), ReleaseAsDead(), Refresh() and
  // CheckAcquired() there are FailedPrecondition on stores whose locks are
  // serializable (elsewhere the store tells, as in its header).
  absl::Status Release();

  // Releases as `Release()` does, but as a holder that died would: the next
  // holder is told that its predecessor died holding the lock
  // (`previous_owner_died()`), on stores with the `owner_death` capability;
  // on others this is `Release()`. For a holder whose work under the lock
  // was cut short, so that whoever comes next checks what it left half
  // done: `ipclock run` abandons its locks when COMMAND is killed by a
  // signal.
  absl::Status ReleaseAsDead();

  // Whether this object holds the lock as far as it knows (it acquired and
  // has not released). Costs nothing; `CheckAcquired()` asks the store.
  bool is_acquired() const { return acquired_; }

  // Asks the store whether the lock is still held and is still the lock
  // this object acquired. OK if so; Aborted, saying what happened, if it was
  // lost (the object then counts as released, and what the store still had
  // of it is let go); FailedPrecondition if the lock was not acquired;
  // Unavailable or another error if the store cannot tell now.
  absl::Status CheckAcquired();

  // A self-checking text form of the held lock (resource, owner token,
  // remaining lease, fence) that `FromSerialized()` takes over in another
  // process. FailedPrecondition unless the lock is held on a store with the
  // `serializable` capability. The caller should then set `auto_release`
  // false or destroy this Lock without releasing it (see `Abandon()`).
  absl::StatusOr<std::string> Serialize();

  // Forgets the lock without releasing it, e.g. after `Serialize()` handed
  // it to another process. The store still holds it until it is released
  // there or its lease runs out.
  void Abandon() { acquired_ = false; }

  // The resource name; empty on a moved-from Lock, as are the answers below.
  const std::string& resource() const;
  LockMode mode() const { return mode_; }
  bool IsExpired() const;
  // Time left on the lease; infinite on stores without leases.
  absl::Duration RemainingLifetime() const;
  // Fencing token of the current acquisition (stores with `fencing`).
  std::optional<uint64_t> fence() const;
  // Whether the previous holder died holding the lock (stores with
  // `owner_death`).
  bool previous_owner_died() const;
  // The slots held, on a semaphore of slot locks (`RESOURCE_k`,
  // ipclock/stores/slot_semaphore_store.h): their indices, ascending. Empty
  // on every other store and while nothing is held.
  std::vector<uint32_t> slots() const;

  const Store& store() const { return *store_; }
  const LockOptions& options() const { return options_; }

 private:
  friend class internal::LockAccess;
  friend class LockGuard;
  Lock(std::shared_ptr<Store> store, Key key, const LockOptions& options);
  // Leaves the guard, if any, with nothing to release.
  void DetachGuard();

  absl::StatusOr<bool> AcquireUntil(Deadline deadline, LockMode mode);
  // The store's Acquire() by `deadline`, in slices of kCancelSlice on a store
  // whose waits do not watch the Lock's canceller.
  absl::StatusOr<bool> AcquireFromStoreUntil(Deadline deadline, LockMode mode);
  static constexpr absl::Duration kCancelSlice = absl::Milliseconds(200);
  absl::Status BusyError(absl::Duration timeout) const;
  absl::Status CancelledError() const;
  // Release() through the store's full operation, with the lease-overrun
  // report; kept out of line so that the fast path stays small.
  ABSL_ATTRIBUTE_NOINLINE absl::Status ReleaseFully();
  // Release() without the lease-overrun report.
  absl::Status DeleteFromStore();
  // Metrics (metrics.h), out of line: the hold of a released or lost lock,
  // and a loss, once per acquisition.
  ABSL_ATTRIBUTE_NOINLINE void RecordRelease(const absl::Status& released);
  void NoteLost();

  std::shared_ptr<Store> store_;
  // The acquisition's state (spi/key.h), apart so that this header does not
  // include the store SPI; null only in a moved-from Lock.
  std::unique_ptr<Key> key_;
  LockOptions options_;
  LockMode mode_ = LockMode::kExclusive;
  Capabilities caps_;
  // Whether an exclusive TryAcquire() of a Lock that holds nothing, and a
  // Release(), go straight to the store, with none of the lease handling:
  // on stores without leases whose locks cannot be serialized, never on a
  // moved-from Lock.
  bool fast_path_ = false;
  bool acquired_ = false;
  // The process that acquired (or deserialized) a lock of a serializable
  // store, whose token alone releases it: a fork()ed child's copy of this
  // Lock carries the token too, and must neither release nor use it.
  pid_t holder_pid_ = 0;
  // Whether this is a forked child's copy of such a lock (above).
  bool IsForkedCopy() const;
  absl::Status ForkedCopyError() const;
  // The LockGuard that holds this Lock, if any (lock_guard.h): a move of
  // either one tells the other where it went.
  LockGuard* guard_ = nullptr;
  // This Lock's metrics cell (core/metrics.h); null when its store's
  // metrics are off or the Lock was moved from.
  internal::MetricsCell* metrics_ = nullptr;
  // When the current hold began, if it is timed (else 0).
  int64_t held_since_ = 0;
  // The current acquisition's loss is counted already.
  bool loss_counted_ = false;
};

}  // namespace ipclock

#endif  // IPCLOCK_LOCK_H_
