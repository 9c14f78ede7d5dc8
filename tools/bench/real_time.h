// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// SCHED_FIFO on one CPU, for the priority inversion that the bench times
// (inversion.cc) and tests/priority_inversion_test.cc checks. Header-only,
// so that the test uses it without linking the bench.

#ifndef IPCLOCK_TOOLS_BENCH_REAL_TIME_H_
#define IPCLOCK_TOOLS_BENCH_REAL_TIME_H_

#include <errno.h>
#include <sched.h>
#include <string.h>

namespace ipclock_bench {

// The last CPU this process may run on (0 if its affinity cannot be read):
// the one CPU the processes of an inversion share.
inline int LastAllowedCpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  for (int cpu = CPU_SETSIZE - 1; cpu >= 0; --cpu) {
    if (CPU_ISSET(cpu, &set)) return cpu;
  }
  return 0;
}

// Pins this process to `cpu` alone, SCHED_FIFO at `priority`: 0 or the
// errno (EPERM without CAP_SYS_NICE or an RLIMIT_RTPRIO that allows it).
inline int PinRealTime(int cpu, int priority) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) return errno;
  struct sched_param param;
  memset(&param, 0, sizeof(param));
  param.sched_priority = priority;
  return sched_setscheduler(0, SCHED_FIFO, &param) == 0 ? 0 : errno;
}

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_REAL_TIME_H_
