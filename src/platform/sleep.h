// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The library's sleeps: a backoff between tries, a pause before a
// statement is run again, a wait that no event can end. Each measures on
// CLOCK_MONOTONIC, as deadlines do (monotonic_deadline.h), so that a change
// of the wall clock neither lengthens nor cuts one short, and a signal
// handler that runs meanwhile does not cut one short either (EINTR is
// slept through). A wait that something can end early (a descriptor, a
// canceller, a condition) is not a sleep: see event_signal.h and
// condition_wait.h.

#ifndef IPCLOCK_PLATFORM_SLEEP_H_
#define IPCLOCK_PLATFORM_SLEEP_H_

#include "absl/time/time.h"
#include "platform/monotonic_deadline.h"

namespace ipclock {

// Sleeps until CLOCK_MONOTONIC reaches `deadline`: not at all when it has
// passed, for good with `MonotonicDeadline::Never()`.
void MonotonicSleepUntil(MonotonicDeadline deadline);

// Sleeps for `d` on CLOCK_MONOTONIC: not at all when `d` is zero or less,
// for good when it is infinite.
void MonotonicSleepFor(absl::Duration d);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SLEEP_H_
