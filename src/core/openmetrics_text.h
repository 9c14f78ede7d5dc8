// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Writing metric families as text, in OpenMetrics 1.0 or in the Prometheus
// text format 0.0.4 (ipclock/metrics.h says where each is read). The two
// differ in a counter's family name (OpenMetrics leaves `_total` to the
// samples, Prometheus puts it in `# TYPE` too), in `# UNIT` lines and in the
// closing `# EOF`; gauges and histograms are written alike.

#ifndef IPCLOCK_CORE_OPENMETRICS_TEXT_H_
#define IPCLOCK_CORE_OPENMETRICS_TEXT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "ipclock/metrics.h"

namespace ipclock {
namespace internal {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// `value` fit for a label value between double quotes: `\`, `"` and newline
// escaped, and every byte that is not printable UTF-8 (control bytes,
// invalid sequences) written as the four characters \xHH.
std::string LabelValue(absl::string_view value);

class MetricsText {
 public:
  explicit MetricsText(MetricsTextFormat format) : format_(format) {}

  enum class Type { kCounter, kGauge, kHistogram };

  // Starts the family `name` (without `_total` for a counter). `unit` is
  // empty or the name's last word ("seconds").
  void Family(absl::string_view name, Type type, absl::string_view unit,
              absl::string_view help);

  // One sample of the current family; a counter's gets `_total`.
  void Sample(const MetricLabels& labels, double value);
  // A histogram's buckets (cumulative from `counts`, non-cumulative per
  // bucket), `_count` and `_sum`.
  void Histogram(const MetricLabels& labels, const DurationHistogram& histogram);

  // `line`, a whole sample line (without its newline) of the current
  // family as an earlier text held it, written again as it is.
  void Verbatim(absl::string_view line);

  // The text, with `# EOF` in OpenMetrics.
  std::string Finish();

 private:
  void Line(absl::string_view suffix, const MetricLabels& labels,
            absl::string_view extra_label, absl::string_view extra_value,
            absl::string_view value);

  const MetricsTextFormat format_;
  std::string out_;
  std::string name_;
  Type type_ = Type::kGauge;
};

}  // namespace internal
}  // namespace ipclock

#endif  // IPCLOCK_CORE_OPENMETRICS_TEXT_H_
