// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The classic priority inversion, timed on one store: three SCHED_FIFO
// processes pinned to one CPU. The low-priority one holds the lock with a
// critical section to run; at one instant the high-priority one asks for
// the lock and the middle-priority one starts burning the CPU for a bounded
// time. With priority inheritance the holder runs at the waiter's priority
// and the waiter waits for the critical section; without it the waiter
// waits for the hog.

#ifndef IPCLOCK_TOOLS_BENCH_INVERSION_H_
#define IPCLOCK_TOOLS_BENCH_INVERSION_H_

#include <string>

namespace ipclock_bench {

struct InversionTimes {
  double critical_section_us = 0;
  double hog_us = 0;
};

// Why this process cannot run the case (SCHED_FIFO refused, with the
// errno), or "" if it can.
std::string InversionUnavailable();

// The high-priority process's wait for the lock on `dsn` in microseconds,
// or < 0 if a process failed (said on stderr).
double InversionWaitMicros(const std::string& dsn, const std::string& resource,
                           const InversionTimes& times);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_INVERSION_H_
