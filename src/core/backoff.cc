// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/backoff.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <random>
#include <thread>

#include "core/platform_deadline.h"
#include "platform/event_signal.h"
#include "platform/process_id.h"
#include "platform/sleep.h"

namespace ipclock {

void Backoff::Sleep(Deadline deadline, int cancel_fd) {
  // Seeded per thread from the clock, the pid and the thread, and again in
  // a forked child, which must not repeat its parent's sequence.
  thread_local std::minstd_rand rng;
  thread_local pid_t seeded_for = 0;
  if (seeded_for != CurrentPid()) {
    seeded_for = CurrentPid();
    rng.seed(static_cast<unsigned>(
        Deadline::NowNanos() ^ (static_cast<int64_t>(seeded_for) << 20) ^
        static_cast<int64_t>(std::hash<std::thread::id>()(std::this_thread::get_id()))));
  }
  std::uniform_real_distribution<double> jitter(0.75, 1.25);
  const absl::Duration step = next_ * jitter(rng);
  next_ = std::min(next_ * 2, max_);
  if (cancel_fd < 0) {
    MonotonicSleepFor(std::min(step, deadline.Remaining()));
    return;
  }
  Deadline until = Deadline::In(step);
  if (deadline < until) until = deadline;
  WaitReadableOrCancelled(-1, cancel_fd, ForPlatform(until));
}

}  // namespace ipclock
