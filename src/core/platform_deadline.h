// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A `Deadline` handed to a timed wait of the platform layer, which has its
// own deadline type (platform/monotonic_deadline.h) so that it depends on
// nothing above it. Both count nanoseconds on CLOCK_MONOTONIC, with 0 for
// `Past()` and INT64_MAX for `Never()`, so the conversion is exact.

#ifndef IPCLOCK_CORE_PLATFORM_DEADLINE_H_
#define IPCLOCK_CORE_PLATFORM_DEADLINE_H_

#include "ipclock/spi/deadline.h"
#include "platform/monotonic_deadline.h"

namespace ipclock {

inline MonotonicDeadline ForPlatform(Deadline deadline) {
  return MonotonicDeadline::AtNanos(deadline.monotonic_nanos());
}

}  // namespace ipclock

#endif  // IPCLOCK_CORE_PLATFORM_DEADLINE_H_
