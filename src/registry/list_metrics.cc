// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// HeldLocksToOpenMetrics() (ipclock/admin/inspect.h): a listing as gauges.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/openmetrics_text.h"
#include "ipclock/admin/inspect.h"

namespace ipclock {

namespace {

using internal::MetricLabels;
using internal::MetricsText;

struct HolderSeries {
  double holders = 0;
  std::optional<double> held_seconds;  // the longest, where known
};

struct ResourceSeries {
  std::optional<int64_t> waiters;
  std::optional<int64_t> fence;
};

}  // namespace

std::string HeldLocksToOpenMetrics(absl::Span<const HeldLocks> held, absl::Time now,
                                   MetricsTextFormat format) {
  // Keyed by their labels, so that two rows with the same labels are one
  // series (a duplicate would make the whole text invalid).
  std::map<MetricLabels, HolderSeries> holders;
  std::map<MetricLabels, ResourceSeries> resources;
  for (const HeldLocks& store : held) {
    for (const HeldLock& row : store.locks) {
      const MetricLabels resource = {{"store", store.store}, {"resource", row.resource}};
      MetricLabels who = resource;
      who.emplace_back("mode", row.mode);
      who.emplace_back("pid", row.pid > 0 ? absl::StrCat(row.pid) : "");
      who.emplace_back("command", row.command);
      who.emplace_back("unit", row.unit);
      HolderSeries& h = holders[who];
      h.holders += 1;
      if (row.since) {
        const double seconds =
            std::max(0.0, absl::ToDoubleSeconds(now - absl::FromUnixSeconds(*row.since)));
        h.held_seconds = std::max(h.held_seconds.value_or(0.0), seconds);
      }
      ResourceSeries& r = resources[resource];
      if (row.waiters) r.waiters = std::max(r.waiters.value_or(0), *row.waiters);
      if (row.fence) r.fence = std::max(r.fence.value_or(0), *row.fence);
    }
  }
  MetricsText text(format);
  text.Family("ipclock_lock_holder", MetricsText::Type::kGauge, "",
              "Holders of a lock now, one per holder, with who it is where the store can tell.");
  for (const auto& [labels, h] : holders) text.Sample(labels, h.holders);
  text.Family("ipclock_lock_held_seconds", MetricsText::Type::kGauge, "seconds",
              "How long the holder has held the lock, where the store can tell (a lower "
              "bound for lock files: see ipclock list).");
  for (const auto& [labels, h] : holders) {
    if (h.held_seconds) text.Sample(labels, *h.held_seconds);
  }
  text.Family("ipclock_lock_waiters", MetricsText::Type::kGauge, "",
              "Processes waiting for a held lock, where the store can tell.");
  for (const auto& [labels, r] : resources) {
    if (r.waiters) text.Sample(labels, static_cast<double>(*r.waiters));
  }
  text.Family("ipclock_lock_fence", MetricsText::Type::kGauge, "",
              "The fencing token of the current holder; it grows with every acquisition.");
  for (const auto& [labels, r] : resources) {
    if (r.fence) text.Sample(labels, static_cast<double>(*r.fence));
  }
  return text.Finish();
}

}  // namespace ipclock
