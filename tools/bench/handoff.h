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
#include <vector>

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
  // The median of every acquisition's wait, all processes together.
  double median_wait_us = -1;
  // Each process's longest wait, by index.
  std::vector<double> worst_wait_us_by_process;
  // The most acquisitions by other processes during one wait: a figure of
  // order that the machine's load cannot blur. A queue in order keeps it
  // below the number of processes; a lock that lets the releaser barge in
  // lets it grow with the length of the run.
  int64_t most_overtaken = -1;
};

// What one contending process does, made in that process after fork.
class Contender {
 public:
  virtual ~Contender() = default;
  virtual absl::Status Acquire() = 0;  // waits as long as it takes
  virtual absl::Status Release() = 0;
};
// Makes process `index`'s Contender.
using ContenderFactory =
    std::function<absl::StatusOr<std::unique_ptr<Contender>>(int index)>;

// How the contending processes loop.
struct ContentionShape {
  int procs = 1;
  int millis = 100;
  // The holder sleeps this long before each release (a critical section
  // that waits for I/O, leaving the CPUs to the waiters, so that the waits
  // are the lock's more than the machine's); 0 releases at once. Either
  // way it acquires again at once.
  int hold_us = 0;
};

// `shape.procs` processes each make a Contender and loop Acquire, hold,
// Release for `shape.millis`; returns the total throughput and the waits.
Contention ContendWith(const ContentionShape& shape, const ContenderFactory& make);
// The same with an ipclock Lock on `resource` of `dsn` in each process,
// exclusive unless `shared(index)` says process `index` takes shared locks.
Contention Contend(const std::string& dsn, const std::string& resource,
                   const ContentionShape& shape,
                   const std::function<bool(int index)>& shared = nullptr);
// The same with the kernel primitive a local store is built on, called by
// hand: a robust process-shared mutex (with priority inheritance for
// kPiRobustMutex, which shm's fair and pi segments use), flock(2) on a file
// in `dir` (each process opening it), semop(2) with SEM_UNDO on a private
// set, or sem_wait + sem_post of a process-shared POSIX semaphore.
enum class RawPrimitive { kRobustMutex, kPiRobustMutex, kFlock, kSemop, kPosixSem };
Contention ContendRaw(RawPrimitive kind, const std::string& dir, const ContentionShape& shape);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_HANDOFF_H_
