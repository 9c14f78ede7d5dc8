// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A wait on a std::condition_variable that ends at a deadline. The timed
// waits of the standard library read the clock and call
// pthread_cond_clockwait() inline, in the caller's object: here they are
// made in one place, on CLOCK_MONOTONIC (the clock of every deadline, and
// the one libstdc++'s steady_clock reads), where the OS seam test finds
// them. An untimed `cv.wait(lock)` reads no clock and may stay inline.

#ifndef IPCLOCK_PLATFORM_CONDITION_WAIT_H_
#define IPCLOCK_PLATFORM_CONDITION_WAIT_H_

#include <condition_variable>
#include <mutex>

#include "absl/functional/function_ref.h"
#include "platform/monotonic_deadline.h"

namespace ipclock {

// Waits on `cv`, with `lock` held, until it is notified (or wakes
// spuriously) or CLOCK_MONOTONIC reaches `deadline`; false at the deadline.
// Without a timeout with `MonotonicDeadline::Never()`.
bool WaitOnCondition(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                     MonotonicDeadline deadline);

// Waits as above until `done()`, which it calls with `lock` held, is true
// or `deadline` passes; what `done()` last returned, as the standard's
// wait_until(lock, time, done) does.
bool WaitOnCondition(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                     MonotonicDeadline deadline, absl::FunctionRef<bool()> done);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_CONDITION_WAIT_H_
