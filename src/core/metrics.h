// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Where Locks record their metrics (ipclock/metrics.h): one cell per live
// Lock, so that every update is a plain load and store by the only writer.
//
// A process-wide registry maps each store name (`Store::Describe()`) to its
// resources, and each resource to its cells. A Lock claims a free cell of its
// resource when it is created and gives it back when it is destroyed; the
// cell keeps its counts for the next Lock, and a snapshot adds up every cell
// of a resource, claimed or free. Entries and cells are never freed, so the
// pointers a Lock keeps stay valid for the life of the process.
//
// Single writer: a Lock is used from one thread at a time (lock.h), and a
// watch that reports a loss does so under the watched Lock's mutex
// (core/watch_check.cc), so two threads never write one cell at once. The cells
// are still atomics (relaxed loads and stores, which compile to plain moves)
// so that a snapshot from another thread reads them without a data race.

#ifndef IPCLOCK_CORE_METRICS_H_
#define IPCLOCK_CORE_METRICS_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/base/attributes.h"
#include "absl/strings/string_view.h"
#include "ipclock/metrics.h"
#include "ipclock/store.h"

namespace ipclock {
namespace internal {

class ResourceMetricsEntry;
class StoreMetricsEntry;

inline void Bump(std::atomic<uint64_t>& counter, uint64_t by = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

// The bucket of a duration in nanoseconds (MetricsBucketBounds()).
size_t BucketOf(int64_t nanos);

// CLOCK_MONOTONIC in nanoseconds, for timing waits and holds.
int64_t MetricsNowNanos();

struct AtomicHistogram {
  std::array<std::atomic<uint64_t>, kMetricsBuckets> counts{};
  std::atomic<uint64_t> sum_nanos{0};

  void Observe(int64_t nanos) {
    if (nanos < 0) nanos = 0;
    Bump(counts[BucketOf(nanos)]);
    Bump(sum_nanos, static_cast<uint64_t>(nanos));
  }
  void ObserveZero() { Bump(counts[0]); }
  void AddTo(DurationHistogram* out) const;
};

class MetricsCell {
 public:
  std::atomic<uint64_t> acquisitions{0};
  std::atomic<uint64_t> contended{0};
  std::atomic<uint64_t> timeouts{0};
  std::atomic<uint64_t> losses{0};
  std::atomic<uint64_t> owner_deaths{0};
  AtomicHistogram wait;
  AtomicHistogram hold;

  // Whether every hold is timed (MetricsMode::kEvery).
  bool time_every_hold = false;

  // An acquisition that found the lock free. Returns the time to measure
  // its hold from, or 0 when this hold is not timed (see metrics.h).
  int64_t AcquiredAtOnce(bool owner_died, bool sampled_path) {
    const uint64_t n = acquisitions.load(std::memory_order_relaxed);
    acquisitions.store(n + 1, std::memory_order_relaxed);
    wait.ObserveZero();
    if (ABSL_PREDICT_FALSE(owner_died)) Bump(owner_deaths);
    if (!sampled_path || time_every_hold || n % kHoldSampleEvery == 0) {
      return MetricsNowNanos();
    }
    return 0;
  }

  void AddTo(LockCounters* out) const;

 private:
  friend class ResourceMetricsEntry;
  friend void ReleaseMetricsCell(MetricsCell* cell);
  ResourceMetricsEntry* owner_ = nullptr;
  MetricsCell* next_free_ = nullptr;  // guarded by the store entry's mutex
};

// A cell of `store`'s entry for `resource`, claimed for one Lock; nullptr
// when the store's metrics are off.
MetricsCell* ClaimMetricsCell(const Store& store, absl::string_view resource);

// Gives back a cell of ClaimMetricsCell() (nullptr is fine).
void ReleaseMetricsCell(MetricsCell* cell);

// Store's private metrics state, for this file's functions.
class MetricsAccess {
 public:
  static std::atomic<StoreMetricsEntry*>& entry(const Store& store) {
    return store.metrics_entry_;
  }
};

}  // namespace internal
}  // namespace ipclock

#endif  // IPCLOCK_CORE_METRICS_H_
