// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Cost per operation as the number of distinct resources grows.

#ifndef IPCLOCK_TOOLS_BENCH_SCALING_H_
#define IPCLOCK_TOOLS_BENCH_SCALING_H_

#include <memory>
#include <string>

#include "ipclock/store.h"
#include "measure.h"

namespace ipclock_bench {

// Makes `resources` resources exist (one cycle each, untimed), then times
// full cycles (create, acquire, release, destroy) going round all of them.
double FullCycleOverResources(const RunShape& shape,
                              const std::shared_ptr<ipclock::Store>& store,
                              const std::string& prefix, int resources);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_SCALING_H_
