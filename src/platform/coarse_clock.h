// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A clock cheap enough for a lock's hot path, to decide whether a check that
// costs a system call is due: CLOCK_MONOTONIC_COARSE, which the vDSO serves
// from a value the kernel updates at each tick (1 to 10 ms), without reading
// the TSC and without a system call, on every clock source.

#ifndef IPCLOCK_PLATFORM_COARSE_CLOCK_H_
#define IPCLOCK_PLATFORM_COARSE_CLOCK_H_

#include <cstdint>

namespace ipclock {

// Nanoseconds on CLOCK_MONOTONIC_COARSE: behind CLOCK_MONOTONIC by up to a
// tick, never ahead of it. (Out of line, in clocks.cc, as every clock read
// of the library: the OS seam test sees a clock call outside the platform
// layer as a bypass.)
int64_t CoarseMonotonicNanos();

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_COARSE_CLOCK_H_
