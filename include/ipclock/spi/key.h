// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: spi/key.h
// -----------------------------------------------------------------------------
//
// For store writers (the store SPI). Programs never include this header:
// `ipclock::Lock` (lock.h) owns a `Key` and shows what it holds, and no
// header of the API includes this one.
//
// A `Key` is the state of one acquisition of one resource: the resource name,
// the owner token that tells this holder from every other, the lease expiry
// (for stores whose locks expire), the fencing token and the owner-death flag
// that the store reports, and whatever per-store state the store keeps (an
// open file, a connection, a slot index).
//
// Programs never touch a `Key`: they use `ipclock::Lock`, which owns one.
// Stores read it here and record what they found through `KeyWriter`
// (spi/key_state.h); nothing else may change it.
//
// Resource names are byte strings, checked as ipclock/key_options.h says.
//
// A `Key` is movable, not copyable, and not thread-safe.

#ifndef IPCLOCK_SPI_KEY_H_
#define IPCLOCK_SPI_KEY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/key_options.h"
#include "ipclock/spi/deadline.h"

namespace ipclock {

class Canceller;
class Store;

// Per-store state carried by a Key, and what a store records in one
// (spi/key_state.h).
class KeyState;
class KeyWriter;

class Key {
 public:
  // Makes a key for `resource`. InvalidArgument if the name is empty or
  // longer than `options.max_resource_bytes`.
  static absl::StatusOr<Key> Create(absl::string_view resource,
                                    const KeyOptions& options = KeyOptions());

  // Checks `resource` as `Create()` would, without making a key.
  static absl::Status ValidateResource(absl::string_view resource,
                                       const KeyOptions& options = KeyOptions());

  Key(Key&&) noexcept;
  Key& operator=(Key&&) noexcept;
  Key(const Key&) = delete;
  Key& operator=(const Key&) = delete;
  ~Key();

  const std::string& resource() const { return resource_; }

  // The owner token: base64 of 32 bytes from getrandom(2), 44 characters. It
  // is made on first use, so that stores that do not need one (flock, shm)
  // never pay for the system call. Internal on getrandom failure, which
  // Linux >= 3.17 does not produce for 32 bytes outside a seccomp sandbox.
  absl::StatusOr<absl::string_view> Token();
  bool has_token() const { return !token_.empty(); }

  // Number of holders a counting store lets share the resource. 1 (the
  // default) makes a mutex; stores without the `counting` capability refuse
  // anything else.
  uint32_t permits() const { return permits_; }
  // Permits this acquisition takes of `permits()`, all or none: 1 (the
  // default) to `permits()`. Stores without the `weighted` capability
  // refuse anything but 1.
  uint32_t weight() const { return weight_; }
  // The slots held, on a semaphore made of slot locks (RESOURCE_0 ..
  // RESOURCE_{permits-1}, stores/slot_semaphore_store.h): their indices,
  // ascending. Empty on every other store, and while nothing is held.
  const absl::InlinedVector<uint32_t, 4>& slots() const { return slots_; }

  // --- Lease (expiring stores only) -----------------------------------------

  // The expiry, if the key has one (KeyWriter sets it).
  std::optional<Deadline> expiry() const { return expiry_; }
  bool has_expiry() const { return expiry_.has_value(); }
  bool IsExpired() const { return expiry_ && expiry_->has_passed(); }
  // Time until the lease expires: infinite when there is none, zero once it
  // has passed.
  absl::Duration RemainingLifetime() const;
  // How long ago the lease ran out: zero while it lasts, or when there is
  // none. For reports of a lock held past its lease.
  absl::Duration ExpiredFor() const {
    if (!IsExpired()) return absl::ZeroDuration();
    return absl::Nanoseconds(Deadline::NowNanos() - expiry_->monotonic_nanos());
  }

  // --- What the store reported at acquisition --------------------------------

  // A number that grows with every exclusive acquisition of the resource, for
  // stores with the `fencing` capability. Pass it to the protected resource
  // so that it can refuse a holder whose lock was lost (see
  // https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html
  // for why a lease alone is not enough).
  std::optional<uint64_t> fence() const { return fence_; }

  // True when the previous holder died (was killed, crashed, let its lease
  // run out) while holding the lock, for stores with the `owner_death`
  // capability. Whatever it was protecting may be half-updated.
  bool previous_owner_died() const { return previous_owner_died_; }

  // --- Cancellation (`Canceller`, ipclock/lock.h) -----------------------------

  // Whether the Lock's canceller was cancelled: the wait under way should
  // end now. A store with the `cancellable` capability looks wherever its
  // wait would otherwise sleep on, and then gives up its place in the queue
  // as when the deadline passes, and `Acquire()` returns false. Always false
  // without a canceller.
  bool cancelled() const;
  // The canceller's descriptor, readable once cancelled, for waits that
  // poll; -1 without a canceller.
  int cancel_fd() const;

  // --- A wait that follows a try ----------------------------------------------

  // True during an `Acquire()` with a deadline that `Lock` makes right after
  // a try of its own found the resource held (it tries first to tell a wait
  // from an acquisition at once, for metrics and for callers that report
  // waits). A store whose wait would begin with a try may block at once
  // instead, so that a contended acquisition tries once, then waits: flock,
  // SysV and POSIX semaphores block at once, and the stores whose waits
  // poll (Redis, memcached, the table stores) sleep their first step first
  // (Backoff::SleepIfTriedJustNow). Never true for a try (a past deadline).
  bool tried_just_now() const { return tried_just_now_; }

  // --- Another thread's view -------------------------------------------------

  // A key for the same acquisition (resource, token, permits, weight, lease, fence,
  // canceller) that holds no store's state: for code between Lock and a
  // store that asks one store about this acquisition on another thread
  // while this key stays in use, lending it that store's state
  // (KeyWriter::MoveState()) and taking it back once the call returned.
  // The combined store checks a member whose server may be slow that way.
  Key Twin() const;

  // --- Moving a lock between processes ----------------------------------------

  // False once a store that ties a lock to the process holding it (an open
  // file, a kernel mutex) acquired through this key.
  bool serializable() const { return serializable_; }

  // A self-checking text form of the key (resource, token, remaining lease,
  // fence) for stores with the `serializable` capability, to hand a held
  // lock to another process. FailedPrecondition for an unserializable key.
  absl::StatusOr<std::string> Serialize();
  // The inverse of `Serialize()`. InvalidArgument, saying what is wrong, for
  // anything that was not produced by it or was altered since.
  static absl::StatusOr<Key> Deserialize(absl::string_view text,
                                         const KeyOptions& options = KeyOptions());

 private:
  // Each store object keeps its own state in the key (spi/store_interface.h,
  // StoreWithState), found by the store's address.
  friend class StoreInterface;
  // What stores and Lock record in the key (spi/key_state.h).
  friend class KeyWriter;
  // Inline: every reused acquisition and release looks its state up.
  KeyState* state(const Store* store) const {
    for (const StateEntry& e : states_) {
      if (e.store == store) return e.state.get();
    }
    return nullptr;
  }
  void set_state(const Store* store, std::unique_ptr<KeyState> state);
  std::unique_ptr<KeyState> take_state(const Store* store);

  explicit Key(std::string resource);

  // Moves the expiry to now + `ttl` unless it is already earlier.
  void ReduceLifetime(absl::Duration ttl);

  struct StateEntry {
    const Store* store;
    std::unique_ptr<KeyState> state;
  };

  std::string resource_;
  std::string token_;
  std::optional<Deadline> expiry_;
  std::optional<uint64_t> fence_;
  uint32_t permits_ = 1;
  uint32_t weight_ = 1;
  absl::InlinedVector<uint32_t, 4> slots_;
  bool previous_owner_died_ = false;
  bool serializable_ = true;
  bool tried_just_now_ = false;
  // The Lock's, which outlives the key's use by any store call.
  const Canceller* canceller_ = nullptr;
  absl::InlinedVector<StateEntry, 1> states_;
};

}  // namespace ipclock

#endif  // IPCLOCK_SPI_KEY_H_
