// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Writes the report: bench.md (also printed), bench.json, and the handoff
// plot (handoff.dat, handoff.png) when gnuplot is installed.

#ifndef IPCLOCK_TOOLS_BENCH_OUTPUT_H_
#define IPCLOCK_TOOLS_BENCH_OUTPUT_H_

#include <string>

#include "report.h"

namespace ipclock_bench {

bool WriteOutputs(const Report& report, const std::string& dir);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_OUTPUT_H_
