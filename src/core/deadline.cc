// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/spi/deadline.h"

#include <time.h>

#include "platform/monotonic_deadline.h"

namespace ipclock {

int64_t Deadline::NowNanos() { return MonotonicNowNanos(); }

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
  return MonotonicDeadline::AtNanos(nanos_).ToTimespec();
}

}  // namespace ipclock
