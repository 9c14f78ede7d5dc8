// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "measure.h"

#include <time.h>

#include <algorithm>

namespace ipclock_bench {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

double MedianNsPerOp(const RunShape& shape,
                     absl::FunctionRef<bool(int64_t n)> body) {
  // Warm-up in growing batches, until it has run a few milliseconds or a
  // tenth of the operations: long enough to fault pages in and fill caches,
  // and a measure of what one operation costs.
  const int64_t warmup_cap = std::max<int64_t>(shape.operations / 10, 10);
  int64_t warmup = 10;
  int64_t start, warm_ns;
  for (;;) {
    start = NowNs();
    if (!body(warmup)) return -1;
    warm_ns = std::max<int64_t>(NowNs() - start, 1);
    if (warm_ns >= 5000000 || warmup >= warmup_cap) break;
    warmup = std::min(warmup * 4, warmup_cap);
  }
  const int64_t n = std::clamp<int64_t>(
      shape.max_ns_per_repetition * warmup / warm_ns, 10, shape.operations);
  std::vector<double> per_op;
  for (int r = 0; r < shape.repetitions; ++r) {
    start = NowNs();
    if (!body(n)) return -1;
    per_op.push_back(static_cast<double>(NowNs() - start) / static_cast<double>(n));
  }
  std::sort(per_op.begin(), per_op.end());
  return per_op[per_op.size() / 2];
}

RunShape Scaled(const RunShape& shape, int64_t divisor) {
  RunShape out = shape;
  out.operations = std::max<int64_t>(shape.operations / divisor, 50);
  return out;
}

double Percentile(std::vector<int64_t>& samples, double pct) {
  if (samples.empty()) return -1;
  std::sort(samples.begin(), samples.end());
  size_t i = static_cast<size_t>(pct / 100.0 * static_cast<double>(samples.size() - 1) + 0.5);
  return static_cast<double>(samples[std::min(i, samples.size() - 1)]);
}

}  // namespace ipclock_bench
