// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Every clock the library reads. All four are served by the vDSO without a
// system call; they cannot fail with a valid clock id, so no fault point.

#include <time.h>

#include <cstdint>

#include "absl/time/time.h"
#include "platform/coarse_clock.h"
#include "platform/monotonic_deadline.h"
#include "platform/shm_mapping.h"
#include "platform/wall_clock.h"

namespace ipclock {

namespace {

int64_t Nanos(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

int64_t CoarseMonotonicNanos() { return Nanos(CLOCK_MONOTONIC_COARSE); }

int64_t MonotonicNowNanos() { return Nanos(CLOCK_MONOTONIC); }

int64_t WallClockSeconds() { return static_cast<int64_t>(time(nullptr)); }

absl::Time WallClockNow() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return absl::TimeFromTimespec(ts);
}

}  // namespace ipclock
