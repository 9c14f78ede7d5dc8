// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: metrics.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/ipclock.h includes it).
//
// How this process's locks behave over time: per store and per resource,
// how many acquisitions there were, how many had to wait, how many gave up,
// how many locks were lost or found their previous holder dead, and how
// long each acquisition waited and each lock was held. Every `Lock` records
// into them unless its store's metrics are off; `SnapshotMetrics()` reads
// them and `WriteOpenMetrics()` renders them for Prometheus.
//
// Example (a daemon's metrics page):
//
//   // The body of a scrape with Accept: application/openmetrics-text; with
//   // MetricsTextFormat::kPrometheus, a file for node_exporter's textfile
//   // collector.
//   std::string MetricsPage() {
//     return ipclock::WriteOpenMetrics(ipclock::SnapshotMetrics());
//   }
//
// What is counted, per resource of each store (`Store::Describe()`):
//
//   acquisitions   every acquisition (try, wait, shared or exclusive)
//   contended      acquisitions that found the lock held and waited for it
//                  (a `TryAcquire()` never waits, so never counts here)
//   timeouts       tries that found the lock held, and waits that ran out
//   losses         held locks found lost: by `CheckAcquired()`, by a watch
//                  (lock_watch.h), or at `Release()` (including a lease
//                  that ran out before release)
//   owner_deaths   acquisitions told that the previous holder died holding
//                  the lock (stores with `owner_death`)
//   wait           how long each acquisition waited (0 when it found the
//                  lock free)
//   hold           how long each lock was held, acquisition to release or
//                  loss
//
// Cost. Every update is a plain load and store on a cell that only one Lock
// writes (each live Lock has its own; a Lock destroyed leaves its cell, and
// its counts, to the next Lock on the resource), so no update takes a lock
// or an atomic read-modify-write. The counters and the wait of an acquisition
// that found the lock free cost no clock read; a wait is timed with the
// monotonic clock, and so is a hold, except on the uncontended
// `TryAcquire()` of a store without leases (the reused handle's fast path,
// a few nanoseconds on the shm store), where `MetricsMode::kOn` times one hold
// in `kHoldSampleEvery` (the first of each Lock's cell always) and
// `MetricsMode::kEvery` times every one. doc/performance.md has the cost of
// each mode, measured by tools/bench.
//
// What they are not. These are this process's figures: another process's
// acquisitions are in its own metrics. `ipclock list --format=openmetrics`
// shows what can be seen of every process from outside (holders, waiters,
// how long held), not these counters.
//
// A snapshot is not atomic across counters: each counter is read once,
// without stopping the Locks that write it, so a snapshot taken during an
// acquisition may count it in one counter and not yet in another.
//
// Resources. A store keeps separate figures for its first
// `kMaxMetricsResources` resources; acquisitions of further resources are
// added to one entry for the rest (`StoreMetrics::other_resources`), so that
// a program that locks a new name per job does not grow without bound.

#ifndef IPCLOCK_METRICS_H_
#define IPCLOCK_METRICS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace ipclock {

// What a store's Locks record. Set by the DSN option `metrics=off|on|every`
// (any store), `StoreOptions::metrics` or `Store::SetMetricsMode()`; a Lock
// follows the mode its store had when the Lock was created.
enum class MetricsMode : uint8_t {
  kOff,    // nothing is recorded
  kOn,     // the default: every counter and wait; holds as said above
  kEvery,  // as kOn, and every hold is timed
};

// On the reused handle's fast path under kOn, one hold in this many is
// timed.
inline constexpr uint64_t kHoldSampleEvery = 64;

// Resources per store with figures of their own; the rest share one entry.
inline constexpr size_t kMaxMetricsResources = 1000;

// Fixed log-scale buckets: upper bounds of 1 µs times 4^k for k = 0 to 15
// (1 µs, 4 µs, 16 µs, ... 268.435456 s, 1073.741824 s), then +Inf.
inline constexpr size_t kMetricsBuckets = 17;

// The finite upper bounds, in seconds (kMetricsBuckets - 1 of them).
const std::array<double, kMetricsBuckets - 1>& MetricsBucketBounds();

struct DurationHistogram {
  // counts[i]: observations above bound i-1 and at most bound i (not
  // cumulative); the last is everything above the last finite bound.
  std::array<uint64_t, kMetricsBuckets> counts{};
  uint64_t count = 0;  // the sum of `counts`
  double sum_seconds = 0;

  void Add(const DurationHistogram& other);
};

struct LockCounters {
  uint64_t acquisitions = 0;
  uint64_t contended = 0;
  uint64_t timeouts = 0;
  uint64_t losses = 0;
  uint64_t owner_deaths = 0;
  DurationHistogram wait;
  // Under kOn, `hold.count` may be below the acquisitions released (see
  // above).
  DurationHistogram hold;

  void Add(const LockCounters& other);
};

struct ResourceMetrics {
  std::string resource;  // as given (any bytes)
  LockCounters counters;
};

struct StoreMetrics {
  std::string store;  // `Store::Describe()`: every store object of that name
  std::vector<ResourceMetrics> resources;  // sorted by name
  // Resources past kMaxMetricsResources, together.
  LockCounters other_resources;
  bool has_other_resources = false;

  // The store's figures over all its resources.
  LockCounters Total() const;
};

struct MetricsSnapshot {
  std::vector<StoreMetrics> stores;  // sorted by name
  absl::Time taken;
};

// This process's figures now, of every store that has had a Lock with
// metrics on.
MetricsSnapshot SnapshotMetrics();

enum class MetricsTextFormat {
  // OpenMetrics 1.0 text (`application/openmetrics-text; version=1.0.0`):
  // counter families named without `_total`, `# UNIT` lines, `# EOF`.
  kOpenMetrics,
  // Prometheus text format 0.0.4 (`text/plain; version=0.0.4`), what
  // node_exporter's textfile collector and `promtool check metrics` read:
  // counter families named with `_total`, no `# UNIT`, no `# EOF`.
  kPrometheus,
};

// `snapshot` as metric families named ipclock_acquisitions,
// ipclock_contended, ipclock_timeouts, ipclock_losses, ipclock_owner_deaths
// (counters) and ipclock_wait_seconds, ipclock_hold_seconds (histograms),
// each sample labelled `store` and `resource` (the other resources:
// `store` and `other_resources="true"`). Label values are escaped; bytes
// that are not printable UTF-8 are written as \xHH.
std::string WriteOpenMetrics(const MetricsSnapshot& snapshot,
                             MetricsTextFormat format = MetricsTextFormat::kOpenMetrics);

}  // namespace ipclock

#endif  // IPCLOCK_METRICS_H_
