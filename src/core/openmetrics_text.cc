// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/openmetrics_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace ipclock {
namespace internal {

namespace {

// The length of the valid, non-control UTF-8 sequence at the start of `s`,
// or 0.
size_t PrintableSequence(absl::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c >= 0x20 && c < 0x7f) return 1;
  size_t n = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
  } else {
    return 0;  // ASCII control or DEL, a continuation byte, or never valid
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xc0) != 0x80) return 0;
  }
  // Overlong forms, surrogates, past U+10FFFF, and C1 controls.
  if (c == 0xe0 && b(1) < 0xa0) return 0;
  if (c == 0xed && b(1) >= 0xa0) return 0;
  if (c == 0xf0 && b(1) < 0x90) return 0;
  if (c == 0xf4 && b(1) >= 0x90) return 0;
  if (c == 0xc2 && b(1) < 0xa0) return 0;
  return n;
}

std::string Number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return absl::StrFormat("%.9g", value);
}

std::string HelpText(absl::string_view help) {
  return absl::StrReplaceAll(help, {{"\\", "\\\\"}, {"\n", "\\n"}});
}

}  // namespace

std::string LabelValue(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  while (!value.empty()) {
    const char c = value[0];
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
      value.remove_prefix(1);
      continue;
    }
    if (c == '\n') {
      out += "\\n";
      value.remove_prefix(1);
      continue;
    }
    const size_t n = PrintableSequence(value);
    if (n == 0) {
      absl::StrAppend(&out, "\\\\x",
                      absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
      value.remove_prefix(1);
      continue;
    }
    out.append(value.data(), n);
    value.remove_prefix(n);
  }
  return out;
}

void MetricsText::Family(absl::string_view name, Type type, absl::string_view unit,
                         absl::string_view help) {
  name_ = std::string(name);
  type_ = type;
  const bool om = format_ == MetricsTextFormat::kOpenMetrics;
  const std::string family =
      type == Type::kCounter && !om ? absl::StrCat(name, "_total") : name_;
  absl::StrAppend(&out_, "# HELP ", family, " ", HelpText(help), "\n");
  absl::StrAppend(&out_, "# TYPE ", family, " ",
                  type == Type::kCounter ? "counter"
                  : type == Type::kGauge ? "gauge"
                                         : "histogram",
                  "\n");
  if (om && !unit.empty()) absl::StrAppend(&out_, "# UNIT ", family, " ", unit, "\n");
}

void MetricsText::Line(absl::string_view suffix, const MetricLabels& labels,
                       absl::string_view extra_label, absl::string_view extra_value,
                       absl::string_view value) {
  absl::StrAppend(&out_, name_, suffix);
  if (!labels.empty() || !extra_label.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& [key, v] : labels) {
      absl::StrAppend(&out_, first ? "" : ",", key, "=\"", LabelValue(v), "\"");
      first = false;
    }
    if (!extra_label.empty()) {
      absl::StrAppend(&out_, first ? "" : ",", extra_label, "=\"", extra_value, "\"");
    }
    out_ += '}';
  }
  absl::StrAppend(&out_, " ", value, "\n");
}

void MetricsText::Sample(const MetricLabels& labels, double value) {
  Line(type_ == Type::kCounter ? "_total" : "", labels, "", "", Number(value));
}

void MetricsText::Histogram(const MetricLabels& labels, const DurationHistogram& h) {
  const auto& bounds = MetricsBucketBounds();
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kMetricsBuckets; ++i) {
    cumulative += h.counts[i];
    const std::string le =
        i < bounds.size() ? absl::StrFormat("%.9g", bounds[i]) : std::string("+Inf");
    Line("_bucket", labels, "le", le, absl::StrCat(cumulative));
  }
  Line("_count", labels, "", "", absl::StrCat(h.count));
  Line("_sum", labels, "", "", Number(h.sum_seconds));
}

void MetricsText::Verbatim(absl::string_view line) { absl::StrAppend(&out_, line, "\n"); }

std::string MetricsText::Finish() {
  if (format_ == MetricsTextFormat::kOpenMetrics) out_ += "# EOF\n";
  return std::move(out_);
}

}  // namespace internal

namespace {

using internal::MetricLabels;
using internal::MetricsText;

struct Series {
  MetricLabels labels;
  const LockCounters* counters;
};

}  // namespace

std::string WriteOpenMetrics(const MetricsSnapshot& snapshot, MetricsTextFormat format) {
  std::vector<Series> series;
  for (const StoreMetrics& store : snapshot.stores) {
    for (const ResourceMetrics& r : store.resources) {
      series.push_back({{{"store", store.store}, {"resource", r.resource}}, &r.counters});
    }
    if (store.has_other_resources) {
      series.push_back(
          {{{"store", store.store}, {"other_resources", "true"}}, &store.other_resources});
    }
  }
  MetricsText text(format);
  struct CounterFamily {
    const char* name;
    const char* help;
    uint64_t LockCounters::*field;
  };
  const CounterFamily counters[] = {
      {"ipclock_acquisitions", "Locks acquired by this process.", &LockCounters::acquisitions},
      {"ipclock_contended", "Acquisitions that found the lock held and waited for it.",
       &LockCounters::contended},
      {"ipclock_timeouts", "Tries that found the lock held, and waits that ran out.",
       &LockCounters::timeouts},
      {"ipclock_losses", "Held locks found lost (deleted, expired, session ended).",
       &LockCounters::losses},
      {"ipclock_owner_deaths", "Acquisitions told that the previous holder died holding the lock.",
       &LockCounters::owner_deaths},
  };
  for (const CounterFamily& f : counters) {
    text.Family(f.name, MetricsText::Type::kCounter, "", f.help);
    for (const Series& s : series) {
      text.Sample(s.labels, static_cast<double>(s.counters->*f.field));
    }
  }
  text.Family("ipclock_wait_seconds", MetricsText::Type::kHistogram, "seconds",
              "How long each acquisition waited for the lock (0 if it found it free).");
  for (const Series& s : series) text.Histogram(s.labels, s.counters->wait);
  text.Family("ipclock_hold_seconds", MetricsText::Type::kHistogram, "seconds",
              "How long locks were held, from acquisition to release or loss.");
  for (const Series& s : series) text.Histogram(s.labels, s.counters->hold);
  return text.Finish();
}

}  // namespace ipclock
