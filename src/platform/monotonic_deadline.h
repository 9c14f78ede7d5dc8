// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The platform layer's clock and deadline: CLOCK_MONOTONIC now, and the
// point on it by which a timed wait here (futex, robust mutex, flock, a
// socket) must end. The layers above keep their own `ipclock::Deadline`
// (ipclock/spi/deadline.h), which is the same number of nanoseconds and
// converts with `MonotonicDeadline::AtNanos(d.monotonic_nanos())`
// (core/platform_deadline.h); this one exists so that the platform layer
// depends on nothing of ipclock's.

#ifndef IPCLOCK_PLATFORM_MONOTONIC_DEADLINE_H_
#define IPCLOCK_PLATFORM_MONOTONIC_DEADLINE_H_

#include <time.h>

#include <cstdint>

namespace ipclock {

// Nanoseconds on CLOCK_MONOTONIC, now (clocks.cc).
int64_t MonotonicNowNanos();

class MonotonicDeadline {
 public:
  // Already passed: a wait with it tries exactly once.
  static constexpr MonotonicDeadline Past() { return MonotonicDeadline(0); }
  // Never passes: a wait with it waits for as long as it takes.
  static constexpr MonotonicDeadline Never() { return MonotonicDeadline(kNeverNanos); }
  // At `nanos` on CLOCK_MONOTONIC; INT64_MAX is `Never()`, 0 `Past()`.
  static constexpr MonotonicDeadline AtNanos(int64_t nanos) {
    return MonotonicDeadline(nanos);
  }

  bool is_never() const { return nanos_ == kNeverNanos; }
  bool has_passed() const { return !is_never() && MonotonicNowNanos() >= nanos_; }
  int64_t nanos() const { return nanos_; }

  // The absolute CLOCK_MONOTONIC time that timed system calls take.
  // Undefined for `Never()`; check `is_never()` first.
  struct timespec ToTimespec() const {
    struct timespec ts;
    ts.tv_sec = static_cast<time_t>(nanos_ / 1000000000);
    ts.tv_nsec = static_cast<long>(nanos_ % 1000000000);
    return ts;
  }

  friend bool operator==(MonotonicDeadline a, MonotonicDeadline b) {
    return a.nanos_ == b.nanos_;
  }

 private:
  static constexpr int64_t kNeverNanos = INT64_MAX;
  constexpr explicit MonotonicDeadline(int64_t nanos) : nanos_(nanos) {}

  int64_t nanos_;
};

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_MONOTONIC_DEADLINE_H_
