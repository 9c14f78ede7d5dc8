// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ListingsToOpenMetrics() and KeptSamples() (ipclock/admin/inspect.h): a
// listing of several stores as gauges, and the part of an earlier one that
// a failed store keeps.

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/dsn.h"
#include "core/openmetrics_text.h"
#include "ipclock/admin/inspect.h"

namespace ipclock {

namespace {

using internal::MetricLabels;
using internal::MetricsText;

constexpr absl::string_view kSuccess = "ipclock_list_success";
constexpr absl::string_view kLastSuccess = "ipclock_list_last_success_timestamp_seconds";
constexpr absl::string_view kHolders = "ipclock_lock_holders";
constexpr absl::string_view kHolderInfo = "ipclock_lock_holder_info";
constexpr absl::string_view kHeld = "ipclock_lock_held_seconds";
constexpr absl::string_view kWaiters = "ipclock_lock_waiters";
constexpr absl::string_view kLongestWait = "ipclock_lock_longest_wait_seconds";
constexpr absl::string_view kFence = "ipclock_lock_fence";

// The families whose samples a failed store keeps, in the order written.
constexpr absl::string_view kKeptFamilies[] = {kLastSuccess, kHolders,     kHolderInfo, kHeld,
                                               kWaiters,     kLongestWait, kFence};

struct LockSeries {
  int64_t holders = 0;
  std::optional<double> held_seconds;  // the longest
  std::optional<int64_t> waiters;
  std::optional<double> longest_wait;
  std::optional<int64_t> fence;
};

// Whole seconds: the stores keep times to the second.
double SecondsSince(int64_t unix_seconds, absl::Time now) {
  return static_cast<double>(std::max<int64_t>(0, absl::ToUnixSeconds(now) - unix_seconds));
}

void KeepMax(std::optional<double>* at, double value) {
  *at = std::max(at->value_or(value), value);
}

std::optional<double> AsDouble(std::optional<int64_t> v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

std::string TextDetail(const HeldLock& row, absl::string_view name) {
  for (const auto& [key, value] : row.text_details) {
    if (key == name) return value;
  }
  return "";
}

// What one listing adds: keyed by labels, so that rows with the same
// labels are one series (a duplicate would make the whole text invalid).
struct Series {
  std::map<MetricLabels, double> success;
  std::map<MetricLabels, double> last_success;
  std::map<MetricLabels, LockSeries> locks;
  std::set<MetricLabels> holder_info;
  std::map<absl::string_view, std::vector<std::string>> kept;

  void Add(const StoreListing& listing, absl::Time now) {
    const std::string store = RedactedDsn(listing.dsn);
    const MetricLabels of_store = {{"store", store}};
    if (listing.held == nullptr) {
      success.emplace(of_store, 0);
      for (const std::string& line : listing.kept) {
        for (absl::string_view family : kKeptFamilies) {
          if (absl::StartsWith(line, absl::StrCat(family, "{"))) kept[family].push_back(line);
        }
      }
      return;
    }
    success.emplace(of_store, 1);
    last_success[of_store] = static_cast<double>(absl::ToUnixSeconds(now));
    for (const HeldLock& row : listing.held->locks) {
      const MetricLabels lock = {{"store", store},
                                 {"lock", row.lock.empty() ? row.object : row.lock},
                                 {"resource", row.resource}};
      LockSeries& s = locks[lock];
      const bool died = row.mode == "holder died";
      if (!died) {
        s.holders += row.holders.value_or(1);
        if (row.since) KeepMax(&s.held_seconds, SecondsSince(*row.since, now));
      }
      MetricLabels who = lock;
      who.emplace_back("mode", row.mode);
      who.emplace_back("pid", row.pid > 0 ? absl::StrCat(row.pid) : "");
      who.emplace_back("command", row.command);
      who.emplace_back("unit", row.unit);
      who.emplace_back("host", TextDetail(row, "host"));
      holder_info.insert(std::move(who));
      // Each holder of a shared lock carries the lock's waiters and fence.
      if (row.waiters) s.waiters = std::max(s.waiters.value_or(0), *row.waiters);
      if (row.fence) s.fence = std::max(s.fence.value_or(0), *row.fence);
      for (const LockWaiter& w : row.waiter_list) {
        if (w.since) KeepMax(&s.longest_wait, SecondsSince(*w.since, now));
      }
    }
  }
};

}  // namespace

std::string ListingsToOpenMetrics(absl::Span<const StoreListing> stores, absl::Time now,
                                  MetricsTextFormat format) {
  Series series;
  for (const StoreListing& listing : stores) series.Add(listing, now);
  MetricsText text(format);
  const auto kept = [&](absl::string_view family) {
    for (const std::string& line : series.kept[family]) text.Verbatim(line);
  };
  const auto per_lock = [&](absl::string_view family, auto value_of) {
    for (const auto& [labels, s] : series.locks) {
      if (std::optional<double> v = value_of(s)) text.Sample(labels, *v);
    }
    kept(family);
  };
  text.Family(kSuccess, MetricsText::Type::kGauge, "",
              "1 if this store was listed now, 0 if listing it failed (its other series are "
              "then those of its last good listing).");
  for (const auto& [labels, v] : series.success) text.Sample(labels, v);
  text.Family(kLastSuccess, MetricsText::Type::kGauge, "seconds",
              "When this store was last listed (Unix time): the time of its other series.");
  for (const auto& [labels, v] : series.last_success) text.Sample(labels, v);
  kept(kLastSuccess);
  text.Family(kHolders, MetricsText::Type::kGauge, "",
              "Live holders of the lock (a holder that died is not one).");
  per_lock(kHolders, [](const LockSeries& s) { return AsDouble(s.holders); });
  text.Family(kHolderInfo, MetricsText::Type::kGauge, "",
              "1 per holder, with who it is where the store can tell (mode \"holder died\": "
              "the next holder will be told).");
  for (const MetricLabels& labels : series.holder_info) text.Sample(labels, 1);
  kept(kHolderInfo);
  text.Family(kHeld, MetricsText::Type::kGauge, "seconds",
              "How long the lock has been held, by its longest holder, where the store can "
              "tell (how each knows: ipclock list, since_source).");
  per_lock(kHeld, [](const LockSeries& s) { return s.held_seconds; });
  text.Family(kWaiters, MetricsText::Type::kGauge, "",
              "Processes waiting for the lock, where the store can tell.");
  per_lock(kWaiters, [](const LockSeries& s) { return AsDouble(s.waiters); });
  text.Family(kLongestWait, MetricsText::Type::kGauge, "seconds",
              "How long the longest waiter has waited, where the store keeps when each began.");
  per_lock(kLongestWait, [](const LockSeries& s) { return s.longest_wait; });
  text.Family(kFence, MetricsText::Type::kGauge, "",
              "The fencing token of the latest acquisition; it grows with every one.");
  per_lock(kFence, [](const LockSeries& s) { return AsDouble(s.fence); });
  return text.Finish();
}

std::vector<std::string> KeptSamples(absl::string_view text, absl::string_view dsn) {
  const std::string store =
      absl::StrCat("{store=\"", internal::LabelValue(RedactedDsn(dsn)), "\"");
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t brace = line.find('{');
    if (brace == absl::string_view::npos) continue;
    const absl::string_view name = line.substr(0, brace);
    if (std::find(std::begin(kKeptFamilies), std::end(kKeptFamilies), name) ==
        std::end(kKeptFamilies)) {
      continue;
    }
    absl::string_view labels = line.substr(brace);
    if (!absl::StartsWith(labels, store) || labels.size() <= store.size() ||
        (labels[store.size()] != ',' && labels[store.size()] != '}')) {
      continue;
    }
    // A label value may hold "} ", never a line's end: the value is what
    // follows the last one.
    const size_t end = line.rfind("} ");
    double value;
    if (end == absl::string_view::npos || end < brace ||
        !absl::SimpleAtod(line.substr(end + 2), &value)) {
      continue;
    }
    out.emplace_back(line);
  }
  return out;
}

}  // namespace ipclock
