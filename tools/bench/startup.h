// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What a whole program costs from exec() to exit: `ipclock run -- true`
// beside util-linux flock(1), a minimal C program beside the same program
// without ipclock. Wall time and CPU come from plain runs (posix_spawn,
// wait4's rusage, which counts the children a program waited for, such as
// the `true` that both run); peak RSS and the shared objects mapped are read
// from /proc/PID at the program's exit, which ptrace stops it at, in runs of
// their own so that the stops do not count in the times.

#ifndef IPCLOCK_TOOLS_BENCH_STARTUP_H_
#define IPCLOCK_TOOLS_BENCH_STARTUP_H_

#include <map>
#include <string>
#include <vector>

namespace ipclock_bench {

struct ProcessTimes {
  double wall_us = -1;  // median
  double cpu_us = -1;   // median, user + system, the program's children included
};

struct ProcessPeak {
  double peak_rss_kib = -1;          // VmHWM at exit
  std::vector<std::string> objects;  // shared objects mapped at exit, by path
  bool ok = false;
};

// Runs each of `programs` `runs` times, in turn (one of each, then again),
// so that a burst of other work on the machine falls on all of them alike.
// A program that fails (a non-zero exit) gets -1 figures.
std::map<std::string, ProcessTimes> TimePrograms(
    const std::map<std::string, std::vector<std::string>>& programs, int runs);

// One run of `argv`, stopped at its exit to read /proc. !ok where ptrace is
// refused (a container without CAP_SYS_PTRACE and Yama in mode 3).
ProcessPeak PeakOf(const std::vector<std::string>& argv);

// How many libraries `argv` loads with dlopen() (LD_DEBUG=files says
// "dynamically loaded by" for each), and their names; -1 if it failed.
int DlopenedBy(const std::vector<std::string>& argv, std::vector<std::string>* names);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_STARTUP_H_
