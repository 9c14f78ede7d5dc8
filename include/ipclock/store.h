// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: store.h
// -----------------------------------------------------------------------------
//
// A `Store` is where locks live: lock files, kernel semaphores, a table of
// robust mutexes in shared memory, a Redis or PostgreSQL server. Each store
// declares what it can do in `Capabilities`; `ipclock::Lock` is the interface
// most programs use, and it calls the store.
//
// The interface is small on purpose. Every call takes the `Key` of one
// acquisition and returns a status; none throws.
//
//   * `Save(key, mode, deadline)` acquires. It returns true once the key holds
//     the lock, false when another holder still has it at `deadline`
//     (contention is a value, not an error), and an error status when the
//     store failed. `Deadline::Past()` tries once. A store error during a
//     wait fails closed: the key never holds the lock unless Save said true.
//     Saving a key that already holds the lock in the same mode is a no-op
//     that returns true; in the other mode it converts the lock (promotion or
//     demotion) where the store has shared locks.
//   * `PutOffExpiration(key, ttl)` extends the lease of a held key.
//   * `Delete(key)` releases. Deleting a key that does not hold the lock
//     touches nothing.
//   * `Exists(key)` says whether the key holds the lock now.
//
// Stores are thread-safe: one store may be used from many threads, each with
// its own keys. A single Key must not be used from two threads at once.

#ifndef IPCLOCK_STORE_H_
#define IPCLOCK_STORE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/deadline.h"
#include "ipclock/key.h"

namespace ipclock {

enum class LockMode : uint8_t {
  kExclusive,  // one holder (a writer)
  kShared,     // many holders, no writer (readers)
};

enum class Scope : uint8_t {
  kProcess, // excludes threads and Locks of one process only (in-memory)
  kLocal,   // excludes processes on this host only
  kRemote,  // excludes processes on every host that uses the same server
};

// What a store can do. `Lock` refuses what a store cannot do with
// FailedPrecondition rather than pretending (e.g. a shared acquisition on a
// store without shared locks).
struct Capabilities {
  // Waits sleep in the kernel or the server and wake on release. A store
  // without it polls while waiting.
  bool blocking = false;
  // Locks carry a lease (TTL) and vanish when it runs out unless refreshed.
  bool expiring = false;
  // Shared (read) locks beside exclusive ones.
  bool shared = false;
  // A held key may be serialized and released or refreshed by another
  // process.
  bool serializable = false;
  // Keys get a fencing token that grows with every exclusive acquisition.
  bool fencing = false;
  // The next holder learns that the previous one died holding the lock.
  bool owner_death = false;
  // More than one permit per resource (counting semaphores).
  bool counting = false;
  Scope scope = Scope::kLocal;
};

// Renders capabilities as "blocking,shared,..." for messages and listings.
std::string CapabilitiesToString(const Capabilities& capabilities);

// Where an async waiter (ipclock/async.h) can sleep until a lock may have
// been released, instead of holding a thread blocked in `Store::Save()`.
// See `Store::GetWaitWord()`.
struct WaitWord {
  // A 32-bit futex word; nullptr when the store has none.
  uint32_t* word = nullptr;
  // The resource may be free when `*word & owner_mask` is 0.
  uint32_t owner_mask = 0;
  // A bit that a sleeper sets in the word before it sleeps, and again after
  // a try that took the lock, so that releases wake the sleepers (glibc's
  // FUTEX_WAITERS). A sleeper that is woken and does not take the lock
  // passes the wake on (FUTEX_WAKE of one).
  uint32_t waiters_bit = 0;
  // The word is in memory shared between processes (no FUTEX_PRIVATE).
  bool shared = true;
};

class Store {
 public:
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  virtual ~Store();

  // The store's kind, as in its DSN scheme: "flock", "in-memory", ...
  virtual absl::string_view name() const = 0;

  // A description of this instance for messages, e.g. "flock:///run/lock/x".
  // Never contains a password or secret.
  virtual std::string Describe() const { return std::string(name()); }

  // Fixed for the life of the store: Locks read them once.
  virtual Capabilities capabilities() const = 0;

  virtual absl::StatusOr<bool> Save(Key& key, LockMode mode,
                                    Deadline deadline) = 0;
  virtual absl::Status PutOffExpiration(Key& key, absl::Duration ttl) = 0;
  virtual absl::Status Delete(Key& key) = 0;
  virtual absl::StatusOr<bool> Exists(Key& key) = 0;

  // The futex word on which the lock of `key`'s resource is released, for
  // async waits: a waiter sleeps on it (io_uring or futex(2)) and calls
  // `Save(key, mode, Deadline::Past())` on its own thread when woken. The
  // default has no word (`word` null): async waits then run `Save()` with
  // a deadline on a helper thread, which only stores whose locks do not
  // belong to a thread allow. FailedPrecondition for a store whose locks
  // belong to the acquiring thread but that cannot give a word either.
  virtual absl::StatusOr<WaitWord> GetWaitWord(Key& key);
};

}  // namespace ipclock

#endif  // IPCLOCK_STORE_H_
