// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "time_calls.h"

#include <condition_variable>
#include <mutex>

#include "absl/functional/function_ref.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ipclock_cli {

absl::Time WallClockNow() { return absl::Now(); }

void Sleep(absl::Duration d) { absl::SleepFor(d); }

bool WaitOnCondition(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                     absl::Duration timeout, absl::FunctionRef<bool()> done) {
  return cv.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return done(); });
}

}  // namespace ipclock_cli
