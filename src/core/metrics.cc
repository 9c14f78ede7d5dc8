// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/metrics.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "platform/monotonic_deadline.h"
#include "platform/wall_clock.h"

namespace ipclock {

const std::array<double, kMetricsBuckets - 1>& MetricsBucketBounds() {
  static const std::array<double, kMetricsBuckets - 1> bounds = [] {
    std::array<double, kMetricsBuckets - 1> b{};
    double v = 1e-6;
    for (double& bound : b) {
      bound = v;
      v *= 4;
    }
    return b;
  }();
  return bounds;
}

void DurationHistogram::Add(const DurationHistogram& other) {
  for (size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
  count += other.count;
  sum_seconds += other.sum_seconds;
}

void LockCounters::Add(const LockCounters& other) {
  acquisitions += other.acquisitions;
  contended += other.contended;
  timeouts += other.timeouts;
  losses += other.losses;
  owner_deaths += other.owner_deaths;
  wait.Add(other.wait);
  hold.Add(other.hold);
}

LockCounters StoreMetrics::Total() const {
  LockCounters total = other_resources;
  for (const ResourceMetrics& r : resources) total.Add(r.counters);
  return total;
}

namespace internal {

size_t BucketOf(int64_t nanos) {
  // Bounds of 1000 * 4^k ns: each step is two bits.
  int64_t bound = 1000;
  for (size_t i = 0; i + 1 < kMetricsBuckets; ++i) {
    if (nanos <= bound) return i;
    bound *= 4;
  }
  return kMetricsBuckets - 1;
}

int64_t MetricsNowNanos() { return MonotonicNowNanos(); }

void AtomicHistogram::AddTo(DurationHistogram* out) const {
  for (size_t i = 0; i < counts.size(); ++i) {
    const uint64_t n = counts[i].load(std::memory_order_relaxed);
    out->counts[i] += n;
    out->count += n;
  }
  out->sum_seconds += static_cast<double>(sum_nanos.load(std::memory_order_relaxed)) / 1e9;
}

void MetricsCell::AddTo(LockCounters* out) const {
  out->acquisitions += acquisitions.load(std::memory_order_relaxed);
  out->contended += contended.load(std::memory_order_relaxed);
  out->timeouts += timeouts.load(std::memory_order_relaxed);
  out->losses += losses.load(std::memory_order_relaxed);
  out->owner_deaths += owner_deaths.load(std::memory_order_relaxed);
  wait.AddTo(&out->wait);
  hold.AddTo(&out->hold);
}

class ResourceMetricsEntry {
 public:
  explicit ResourceMetricsEntry(StoreMetricsEntry* store) : store_(store) {}

  StoreMetricsEntry* store() const { return store_; }

  // Under the store entry's mutex.
  MetricsCell* Claim(bool time_every_hold) {
    MetricsCell* cell = free_;
    if (cell != nullptr) {
      free_ = cell->next_free_;
      cell->next_free_ = nullptr;
    } else {
      cells_.push_back(std::make_unique<MetricsCell>());
      cell = cells_.back().get();
      cell->owner_ = this;
    }
    cell->time_every_hold = time_every_hold;
    return cell;
  }
  void GiveBack(MetricsCell* cell) {
    cell->next_free_ = free_;
    free_ = cell;
  }
  void AddTo(LockCounters* out) const {
    for (const auto& cell : cells_) cell->AddTo(out);
  }

 private:
  StoreMetricsEntry* const store_;
  std::vector<std::unique_ptr<MetricsCell>> cells_;
  MetricsCell* free_ = nullptr;
};

class StoreMetricsEntry {
 public:
  explicit StoreMetricsEntry(std::string name) : name_(std::move(name)), other_(this) {}

  MetricsCell* Claim(absl::string_view resource, bool time_every_hold) {
    std::lock_guard<std::mutex> guard(mu_);
    ResourceMetricsEntry* entry = &other_;
    auto it = resources_.find(resource);
    if (it != resources_.end()) {
      entry = it->second.get();
    } else if (resources_.size() < kMaxMetricsResources) {
      entry = resources_
                  .emplace(std::string(resource), std::make_unique<ResourceMetricsEntry>(this))
                  .first->second.get();
    } else {
      has_other_ = true;
    }
    return entry->Claim(time_every_hold);
  }

  void GiveBack(ResourceMetricsEntry* entry, MetricsCell* cell) {
    std::lock_guard<std::mutex> guard(mu_);
    entry->GiveBack(cell);
  }

  StoreMetrics Snapshot() {
    StoreMetrics out;
    out.store = name_;
    std::lock_guard<std::mutex> guard(mu_);
    out.resources.reserve(resources_.size());
    for (const auto& [name, entry] : resources_) {
      ResourceMetrics r;
      r.resource = name;
      entry->AddTo(&r.counters);
      out.resources.push_back(std::move(r));
    }
    std::sort(out.resources.begin(), out.resources.end(),
              [](const ResourceMetrics& a, const ResourceMetrics& b) {
                return a.resource < b.resource;
              });
    out.has_other_resources = has_other_;
    other_.AddTo(&out.other_resources);
    return out;
  }

 private:
  const std::string name_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<ResourceMetricsEntry>> resources_;
  ResourceMetricsEntry other_;
  bool has_other_ = false;
};

namespace {

// Never destroyed: Locks destroyed by static destructors still give their
// cells back.
struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<StoreMetricsEntry>> stores;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

StoreMetricsEntry* EntryFor(const Store& store) {
  std::atomic<StoreMetricsEntry*>& cached = MetricsAccess::entry(store);
  StoreMetricsEntry* entry = cached.load(std::memory_order_acquire);
  if (entry != nullptr) return entry;
  std::string name = store.Describe();
  Registry& registry = TheRegistry();
  {
    std::lock_guard<std::mutex> guard(registry.mu);
    std::unique_ptr<StoreMetricsEntry>& slot = registry.stores[name];
    if (slot == nullptr) slot = std::make_unique<StoreMetricsEntry>(name);
    entry = slot.get();
  }
  cached.store(entry, std::memory_order_release);
  return entry;
}

}  // namespace

MetricsCell* ClaimMetricsCell(const Store& store, absl::string_view resource) {
  const MetricsMode mode = store.metrics_mode();
  if (mode == MetricsMode::kOff) return nullptr;
  return EntryFor(store)->Claim(resource, mode == MetricsMode::kEvery);
}

void ReleaseMetricsCell(MetricsCell* cell) {
  if (cell == nullptr) return;
  cell->owner_->store()->GiveBack(cell->owner_, cell);
}

}  // namespace internal

MetricsSnapshot SnapshotMetrics() {
  MetricsSnapshot out;
  out.taken = WallClockNow();
  std::vector<internal::StoreMetricsEntry*> stores;
  {
    internal::Registry& registry = internal::TheRegistry();
    std::lock_guard<std::mutex> guard(registry.mu);
    for (const auto& [name, entry] : registry.stores) stores.push_back(entry.get());
  }
  // In name order (the map's), each under its own mutex only.
  for (internal::StoreMetricsEntry* entry : stores) out.stores.push_back(entry->Snapshot());
  return out;
}

}  // namespace ipclock
