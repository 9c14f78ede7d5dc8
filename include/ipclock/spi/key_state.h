// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: spi/key_state.h
// -----------------------------------------------------------------------------
//
// For store writers (the store SPI). Programs never include this header.
//
// What a store keeps and records in the `Key` (spi/key.h) of one
// acquisition:
//
//   * `KeyState`: the base of whatever a store keeps per acquisition (an
//     open file, a slot index, a connection). `StoreWithState`
//     (spi/store_interface.h) gives each store typed access to its own.
//   * `KeyWriter`: the facts a store reports at acquisition (fencing token,
//     owner death, whether the lock can be serialized) and the lease that
//     `Lock` sets before it asks the store. A program reads them through
//     `Lock`; only a store, and the code between `Lock` and a store, write
//     them.
//
// Example (what a store's `Acquire()` records once it holds the lock):
//
//   void RecordAcquisition(ipclock::Key& key, uint64_t fence, bool holder_died) {
//     ipclock::KeyWriter writer(key);
//     writer.set_fence(fence);
//     writer.set_previous_owner_died(holder_died);
//   }

#ifndef IPCLOCK_SPI_KEY_STATE_H_
#define IPCLOCK_SPI_KEY_STATE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/spi/key.h"

namespace ipclock {

// Per-store key state: whatever a store keeps for one acquisition. The key
// destroys it when the key is destroyed.
class KeyState {
 public:
  virtual ~KeyState() = default;
};

// Writes what a store found, or what `Lock` asks for, into one key. A view:
// it keeps a reference to `key`, which must outlive it.
class KeyWriter {
 public:
  explicit KeyWriter(Key& key) : key_(key) {}

  // Holders a counting store lets share the resource (Key::permits()).
  void set_permits(uint32_t permits) { key_.permits_ = permits; }
  // Permits this acquisition takes (Key::weight()).
  void set_weight(uint32_t weight) { key_.weight_ = weight; }
  // The slot locks held (Key::slots()).
  void set_slots(const absl::InlinedVector<uint32_t, 4>& slots) { key_.slots_ = slots; }
  void clear_slots() { key_.slots_.clear(); }

  // --- Lease (expiring stores only) -----------------------------------------

  // Drops any expiry: the key does not expire until ReduceLifetime().
  void ResetLifetime() { key_.expiry_.reset(); }
  // Moves the expiry to now + `ttl` unless it is already earlier.
  void ReduceLifetime(absl::Duration ttl) { key_.ReduceLifetime(ttl); }
  // Puts back an earlier expiry (a failed conversion leaves the lease the
  // store had).
  void set_expiry(std::optional<Deadline> expiry) { key_.expiry_ = expiry; }

  // --- What the store reports at acquisition ---------------------------------

  void set_fence(std::optional<uint64_t> fence) { key_.fence_ = fence; }
  void set_previous_owner_died(bool died) { key_.previous_owner_died_ = died; }
  // For stores that tie a lock to the process holding it (an open file, a
  // kernel mutex): `Key::Serialize()` then refuses.
  void MarkUnserializable() { key_.serializable_ = false; }

  // --- What `Lock` gives its stores ------------------------------------------

  // The canceller whose Cancel() ends the key's waits (Key::cancelled());
  // it must outlive every store call on the key.
  void set_canceller(const Canceller* canceller) { key_.canceller_ = canceller; }
  // The canceller of `from` (a key that holds others, as a semaphore's
  // holds its slots' keys), which outlives these keys' store calls too.
  void ShareCanceller(const Key& from) { key_.canceller_ = from.canceller_; }
  // Key::tried_just_now(), for the length of one wait.
  void set_tried_just_now(bool tried) { key_.tried_just_now_ = tried; }

  // Moves the state that `store` keeps in this key, if any, to `to` (a
  // Key::Twin() of it, or back from one), replacing what `to` had for it.
  // False if there was none. Only `store`'s own: a store that keeps its
  // state under another store's address (a wrapper) has none to move.
  bool MoveState(const Store& store, Key& to) {
    std::unique_ptr<KeyState> moved = key_.take_state(&store);
    if (moved == nullptr) return false;
    to.set_state(&store, std::move(moved));
    return true;
  }

 private:
  Key& key_;
};

}  // namespace ipclock

#endif  // IPCLOCK_SPI_KEY_STATE_H_
