// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A clock cheap enough for a lock's hot path, to decide whether a check that
// costs a system call is due: CLOCK_MONOTONIC_COARSE, which the vDSO serves
// from a value the kernel updates at each tick (1 to 10 ms), without reading
// the TSC and without a system call, on every clock source.

#ifndef IPCLOCK_PLATFORM_COARSE_CLOCK_H_
#define IPCLOCK_PLATFORM_COARSE_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace ipclock {

// Nanoseconds on CLOCK_MONOTONIC_COARSE: behind CLOCK_MONOTONIC by up to a
// tick, never ahead of it.
inline int64_t CoarseMonotonicNanos() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_COARSE_CLOCK_H_
