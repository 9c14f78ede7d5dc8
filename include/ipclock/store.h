// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: store.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/ipclock.h includes it).
//
// A `Store` is where locks live: lock files, kernel semaphores, a table of
// robust mutexes in shared memory, a database or a Redis server. Programs get
// one from `StoreFromDsn()` (store_factory.h) or a typed factory such as
// `NewFlockStore()` (ipclock/stores/flock_store.h), hand it to `Lock` or `LockFactory`, and ask it only what
// it is: `name()`, `Describe()` and `capabilities()`.
//
// The operations that take and release locks are not here: they are the
// store SPI's (`StoreInterface`, ipclock/spi/store_interface.h, which every
// store derives from and which documents each operation's contract). `Lock`
// calls them through `StoreCalls`, which checks every call against the
// store's capabilities first.
//
// Stores are thread-safe: one store may serve many threads and Locks at once.

#ifndef IPCLOCK_STORE_H_
#define IPCLOCK_STORE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/diagnostics.h"
#include "ipclock/metrics.h"

namespace ipclock {

enum class LockMode : uint8_t {
  kExclusive,  // one holder (a writer)
  kShared,     // many holders, no writer (readers)
};

enum class Scope : uint8_t {
  kProcess,  // excludes threads and Locks of one process only (in-memory)
  kLocal,    // excludes processes on this host only
  kRemote,   // excludes processes on every host that uses the same server
};

// What a store can do. A request a store cannot honour (a shared lock on a
// store without shared locks, three permits on one that does not count) is
// refused with FailedPrecondition or InvalidArgument, never approximated.
struct Capabilities {
  // Waits sleep in the kernel or the server and wake on release. A store
  // without it polls while waiting.
  bool blocking = false;
  // Locks carry a lease (TTL) and vanish when it runs out unless refreshed.
  bool expiring = false;
  // Shared (read) locks beside exclusive ones.
  bool shared = false;
  // A held lock may be serialized and released or refreshed by another
  // process (`Lock::Serialize()`).
  bool serializable = false;
  // Locks get a fencing token that grows with every exclusive acquisition.
  bool fencing = false;
  // The next holder learns that the previous one died holding the lock.
  bool owner_death = false;
  // More than one permit per resource (counting semaphores).
  bool counting = false;
  // A holder may take several of the permits at once, all or none
  // (`LockOptions::weight`); counting stores only.
  bool weighted = false;
  // Waiters are served in the order they began to wait: a holder that
  // releases and acquires again queues behind them, and a try never jumps
  // the queue, so no waiter starves. Among whom (every process, or only
  // those of this store's kind and options) is in the store's header.
  bool fair = false;
  // A waiting thread lends its scheduling priority to the holder (priority
  // inheritance): a real-time waiter is held up by the critical section,
  // never by threads of a priority between the holder's and its own.
  bool priority_inheritance = false;
  // Waits watch the Lock's canceller (`Canceller`, lock.h): a cancelled
  // wait leaves the store's queue and ends at once (within a 100 ms slice
  // on the fair local stores). Elsewhere a Lock with a canceller waits in
  // slices of 200 ms; nothing such a store keeps for a waiter outlives the
  // waiter's process.
  bool cancellable = false;
  Scope scope = Scope::kLocal;
  // On expiring stores, the longest lease (LockOptions::ttl) the store
  // keeps: memcached reads a longer expiry as a date, the table store keeps
  // expiry in a 32-bit column, a server-side lease must end at all. A
  // longer one is InvalidArgument before anything is tried.
  absl::Duration max_lease = absl::InfiniteDuration();
};

// The longest lease a store whose leases live on a server takes: past it
// the deadline arithmetic of a lease no longer counts.
inline constexpr absl::Duration kLongestServerLease = absl::Hours(24 * 365 * 100);

// OK if a store with `caps` keeps a lease of `ttl` (or has no leases), else
// InvalidArgument saying the longest it keeps.
absl::Status CheckLeaseFits(const Capabilities& caps, absl::Duration ttl);

// Renders capabilities as "local,blocking,shared,..." for messages and
// listings.
std::string CapabilitiesToString(const Capabilities& capabilities);

class StoreInterface;

namespace internal {
class MetricsAccess;
class StoreMetricsEntry;
}  // namespace internal

class Store {
 public:
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  virtual ~Store();

  // The store's kind, as in its DSN scheme: "flock", "in-memory", ...
  virtual absl::string_view name() const = 0;

  // This instance, for messages: e.g. "flock:///run/lock/app". Never
  // contains a password or secret.
  virtual std::string Describe() const { return std::string(name()); }

  // Fixed for the life of the store.
  virtual Capabilities capabilities() const = 0;

  // Where diagnostics about this store and its locks go (diagnostics.h):
  // lease overruns of its locks, losses found by a watch that has no sink of
  // its own, acquisitions on a fallback store. `StoreFromDsn()` sets
  // `StoreOptions::diagnostics` here; empty (the default) leaves them to the
  // process default. Thread-safe; a diagnostic already on its way may still
  // reach the previous sink.
  void SetDiagnosticSink(DiagnosticSink sink);
  DiagnosticSink diagnostic_sink() const;

  // What Locks on this store record (metrics.h); kOn unless the DSN's
  // `metrics=` option, `StoreOptions::metrics` or this says otherwise. A
  // Lock follows the mode its store had when the Lock was created.
  // Thread-safe.
  void SetMetricsMode(MetricsMode mode) {
    metrics_mode_.store(mode, std::memory_order_relaxed);
  }
  MetricsMode metrics_mode() const { return metrics_mode_.load(std::memory_order_relaxed); }

 private:
  // Every store is a `StoreInterface` (spi/store_interface.h), which adds
  // the operations; `StoreCalls` relies on it.
  friend class StoreInterface;
  Store() = default;

  // Read and replaced whole, with std::atomic_load/atomic_store.
  std::shared_ptr<const DiagnosticSink> diagnostic_sink_;

  friend class internal::MetricsAccess;
  std::atomic<MetricsMode> metrics_mode_{MetricsMode::kOn};
  // This store's entry in the process's metrics (core/metrics.h), found by
  // its Describe() at the first Lock that records; never freed.
  mutable std::atomic<internal::StoreMetricsEntry*> metrics_entry_{nullptr};
};

}  // namespace ipclock

#endif  // IPCLOCK_STORE_H_
