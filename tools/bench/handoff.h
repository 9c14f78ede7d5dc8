// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Cross-process figures: how long a waiter in another process takes to get
// a lock once its holder releases it, and how a lock behaves when several
// processes fight over it.

#ifndef IPCLOCK_TOOLS_BENCH_HANDOFF_H_
#define IPCLOCK_TOOLS_BENCH_HANDOFF_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

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

// What one contending process does, made in that process after fork.
class Contender {
 public:
  virtual ~Contender() = default;
  virtual absl::Status Acquire() = 0;  // waits as long as it takes
  virtual absl::Status Release() = 0;
};
using ContenderFactory = std::function<absl::StatusOr<std::unique_ptr<Contender>>()>;

// `procs` processes each make a Contender and loop Acquire + Release for
// `millis`; returns the total throughput and the longest single wait.
Contention ContendWith(int procs, int millis, const ContenderFactory& make);
// The same with an ipclock Lock on `resource` of `dsn` in each process.
Contention Contend(const std::string& dsn, const std::string& resource,
                   int procs, int millis);
// The same with the kernel primitive a local store is built on, called by
// hand: a robust process-shared mutex, flock(2) on a file in `dir` (each
// process opening it), semop(2) with SEM_UNDO on a private set, or
// sem_wait + sem_post of a process-shared POSIX semaphore.
enum class RawPrimitive { kRobustMutex, kFlock, kSemop, kPosixSem };
Contention ContendRaw(RawPrimitive kind, const std::string& dir, int procs, int millis);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_HANDOFF_H_
