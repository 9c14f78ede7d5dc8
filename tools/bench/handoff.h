// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Cross-process figures: how long a waiter in another process takes to get
// a lock once its holder releases it, and how a lock behaves when several
// processes fight over it.

#ifndef IPCLOCK_TOOLS_BENCH_HANDOFF_H_
#define IPCLOCK_TOOLS_BENCH_HANDOFF_H_

#include <string>

namespace ipclock_bench {

struct Latency {
  double p50_us = -1;
  double p99_us = -1;
  double max_us = -1;
};

// The parent holds the lock; a forked child blocks in Acquire(); the parent
// stamps the clock and releases; the child stamps it once it holds the
// lock. The parent lets the child fall asleep (100 µs) before each release,
// so every figure includes the wake-up of a sleeping process.
Latency StoreHandoff(const std::string& dsn, const std::string& resource, int count);
// The same protocol on a bare futex word in shared memory: the floor.
Latency FutexHandoff(int count);

struct Contention {
  double ops_per_sec = -1;
  double worst_wait_us = -1;
};

// `procs` processes each loop Acquire + Release on one resource for
// `millis`; returns the total throughput and the longest single wait.
Contention Contend(const std::string& dsn, const std::string& resource,
                   int procs, int millis);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_HANDOFF_H_
