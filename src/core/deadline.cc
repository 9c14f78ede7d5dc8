// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/deadline.h"

#include <time.h>

namespace ipclock {

int64_t Deadline::NowNanos() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

Deadline Deadline::In(absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return Never();
  if (timeout <= absl::ZeroDuration()) return Past();
  int64_t nanos = absl::ToInt64Nanoseconds(timeout);
  int64_t now = NowNanos();
  if (nanos >= kNeverNanos - now) return Never();
  return Deadline(now + nanos);
}

absl::Duration Deadline::Remaining() const {
  if (is_never()) return absl::InfiniteDuration();
  int64_t left = nanos_ - NowNanos();
  return left > 0 ? absl::Nanoseconds(left) : absl::ZeroDuration();
}

struct timespec Deadline::ToMonotonicTimespec() const {
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(nanos_ / 1000000000);
  ts.tv_nsec = static_cast<long>(nanos_ % 1000000000);
  return ts;
}

}  // namespace ipclock
