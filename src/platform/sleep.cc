// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/sleep.h"

#include <errno.h>
#include <time.h>

#include <cstdint>

#include "absl/time/time.h"
#include "platform/monotonic_deadline.h"

namespace ipclock {

void MonotonicSleepUntil(MonotonicDeadline deadline) {
  // An absolute time: a sleep that a signal interrupts resumes with the
  // same end, where a relative one would restart from what was left.
  struct timespec end;
  if (deadline.is_never()) {
    end.tv_sec = static_cast<time_t>(INT64_MAX / 1000000000);
    end.tv_nsec = 0;
  } else {
    end = deadline.ToTimespec();
  }
  for (;;) {
    // Returns the error itself, not -1 and errno; only EINTR can come with
    // a valid clock and time. Never() wakes here some 292 years on.
    if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, nullptr) != EINTR &&
        !deadline.is_never()) {
      return;
    }
  }
}

void MonotonicSleepFor(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return;
  const int64_t now = MonotonicNowNanos();
  // Saturated: an infinite or a huge `d` is Never().
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  MonotonicSleepUntil(nanos >= INT64_MAX - now ? MonotonicDeadline::Never()
                                               : MonotonicDeadline::AtNanos(now + nanos));
}

}  // namespace ipclock
