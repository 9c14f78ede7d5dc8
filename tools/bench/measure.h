// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Timing for the benchmark: each figure is the median of several
// repetitions after a warm-up, so that one preemption on a shared machine
// moves a repetition, not the figure.

#ifndef IPCLOCK_TOOLS_BENCH_MEASURE_H_
#define IPCLOCK_TOOLS_BENCH_MEASURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"

namespace ipclock_bench {

// The unit of a MedianNsPerOp figure in the report.
constexpr char kNs[] = "ns/op";

struct RunShape {
  int repetitions = 9;
  // Most operations per repetition; a figure costing microseconds uses fewer
  // (see `Scaled`).
  int64_t operations = 200000;
  // Fewer still if a repetition would take longer than this, so that a slow
  // figure (hundreds of microseconds) does not stretch the run to minutes.
  int64_t max_ns_per_repetition = 50000000;
};

// Nanoseconds on CLOCK_MONOTONIC.
int64_t NowNs();

// Runs `body(n)` once to warm up (which also sizes n), then
// `shape.repetitions` times, and returns the median nanoseconds per operation. `body` performs n
// operations and returns false if one failed (the figure is then < 0).
double MedianNsPerOp(const RunShape& shape,
                     absl::FunctionRef<bool(int64_t n)> body);

// The median ns of `take()` then `give()`, a pair an operation: a raw
// primitive's uncontended acquire+release. The figure is < 0 if a `take()`
// returns false.
template <typename Take, typename Give>
double MedianNsPerPair(const RunShape& shape, Take take, Give give) {
  // `take` and `give` copied in, so that the loop reaches the primitive
  // through no more pointers than a loop written out by hand.
  return MedianNsPerOp(shape, [take, give](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (!take()) return false;
      give();
    }
    return true;
  });
}

// The median ns of `op(conn)`, one call an operation, on a connection of
// the bench's own: -1 when `conn` is nullptr (its connect failed, saying
// why) or a call fails. `close(conn)` ends the connection after the runs.
template <typename Conn, typename Close, typename Op>
double MedianNsPerCall(const RunShape& shape, Conn* conn, Close close, Op op) {
  if (conn == nullptr) return -1;
  const double ns = MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (!op(conn)) return false;
    }
    return true;
  });
  close(conn);
  return ns;
}

// A figure this build cannot take: -1, with `*why` set to `reason` (the
// client library it was built without).
inline double Unavailable(std::string* why, const char* reason) {
  *why = reason;
  return -1;
}

// `shape` with operations divided by `divisor` (at least 50).
RunShape Scaled(const RunShape& shape, int64_t divisor);

// Percentile (0..100) of `samples`, which it sorts.
double Percentile(std::vector<int64_t>& samples, double pct);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_MEASURE_H_
