// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/table/poll_backoff.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "absl/time/time.h"
#include "platform/process_id.h"
#include "platform/sleep.h"

namespace ipclock {

void PollBackoff::Sleep(Deadline deadline) {
  // Seeded per thread from the clock and the pid: waiters in different
  // processes, started in the same instant, still draw apart.
  thread_local std::minstd_rand rng(static_cast<unsigned>(
      Deadline::NowNanos() ^ (static_cast<int64_t>(CurrentPid()) << 20) ^
      reinterpret_cast<uintptr_t>(&rng)));
  std::uniform_real_distribution<double> jitter(0.75, 1.25);
  const absl::Duration step = next_ * jitter(rng);
  next_ = std::min(next_ * 2, max_);
  const absl::Duration left = deadline.Remaining();
  if (left <= absl::ZeroDuration()) return;
  MonotonicSleepFor(std::min(step, left));
}

}  // namespace ipclock
