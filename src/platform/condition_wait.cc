// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/condition_wait.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/functional/function_ref.h"
#include "platform/monotonic_deadline.h"

namespace ipclock {

bool WaitOnCondition(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                     MonotonicDeadline deadline) {
  if (deadline.is_never()) {
    cv.wait(lock);
    return true;
  }
  // libstdc++'s steady_clock counts the nanoseconds of CLOCK_MONOTONIC, so
  // the deadline is its time point as it is; a wait until one is
  // pthread_cond_clockwait(CLOCK_MONOTONIC).
  const std::chrono::steady_clock::time_point end{std::chrono::nanoseconds(deadline.nanos())};
  return cv.wait_until(lock, end) == std::cv_status::no_timeout;
}

bool WaitOnCondition(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                     MonotonicDeadline deadline, absl::FunctionRef<bool()> done) {
  while (!done()) {
    if (!WaitOnCondition(cv, lock, deadline)) return done();
  }
  return true;
}

}  // namespace ipclock
