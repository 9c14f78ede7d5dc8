// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the figures were measured on, for the report.

#ifndef IPCLOCK_TOOLS_BENCH_MACHINE_H_
#define IPCLOCK_TOOLS_BENCH_MACHINE_H_

#include <string>

namespace ipclock_bench {

// CPU model, CPU count, kernel and load average.
std::string DescribeMachine();
// The 1, 5 and 15 minute load averages, as /proc/loadavg gives them.
std::string LoadAverage();

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_MACHINE_H_
