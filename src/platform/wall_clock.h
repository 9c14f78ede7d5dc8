// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The wall clock, for what must be told in its terms: a serialized key's
// expiry, which another process (another host's, even) reads back; the
// time at which metrics were taken; how long ago a lock listed was taken,
// from the seconds a store recorded. A wait never measures on it: a
// change of the wall clock (NTP, an RTC set at boot) would lengthen or cut
// it short. Waits use CLOCK_MONOTONIC (monotonic_deadline.h).

#ifndef IPCLOCK_PLATFORM_WALL_CLOCK_H_
#define IPCLOCK_PLATFORM_WALL_CLOCK_H_

#include "absl/time/time.h"

namespace ipclock {

// CLOCK_REALTIME, now (clocks.cc). Out of line, as every clock read of the
// library, so that tests count them (tests/clock_reads_test.cc) and the OS
// seam test sees a clock read elsewhere (absl::Now() included) as a bypass.
absl::Time WallClockNow();

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_WALL_CLOCK_H_
