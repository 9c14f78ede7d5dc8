// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Every clock read, sleep and timed wait of the ipclock command that does
// not go through the library, in this one file. The library makes its own
// in src/platform/, which the command does not see (it includes only the
// public headers, as any program using ipclock would), so this file is the
// command's seam for time: tests/os_seam_test.sh fails on a clock, a sleep
// or a timed wait in any other object of the command.

#ifndef IPCLOCK_TOOLS_IPCLOCK_TIME_CALLS_H_
#define IPCLOCK_TOOLS_IPCLOCK_TIME_CALLS_H_

#include <condition_variable>
#include <mutex>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"

namespace ipclock_cli {

// The wall clock, now: what a lock's age in `ipclock list` is counted from
// (the stores record when it was taken in wall-clock seconds).
absl::Time WallClockNow();

// Sleeps for `d` (not at all when it is zero or less); a signal's handler
// that runs meanwhile does not cut it short.
void Sleep(absl::Duration d);

// Waits on `cv`, with `lock` held, until `done()` (called with `lock` held)
// is true or `timeout` has passed; what `done()` last returned, as
// std::condition_variable::wait_for(lock, timeout, done) does.
bool WaitOnCondition(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                     absl::Duration timeout, absl::FunctionRef<bool()> done);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_TIME_CALLS_H_
