// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// How long the benchmark runs: the full run behind doc/performance.md's
// tables, or --quick for a check that everything still works.

#ifndef IPCLOCK_TOOLS_BENCH_SETTINGS_H_
#define IPCLOCK_TOOLS_BENCH_SETTINGS_H_

#include <array>

#include "measure.h"

namespace ipclock_bench {

struct Settings {
  RunShape shape;  // for figures of about a microsecond or less
  int rounds = 3;  // of the local sections (see main.cc)
  int handoffs = 2000;
  int contention_millis = 300;
  // The fairness rows: processes that loop acquire, hold, release, for
  // this long each run. A hold of a millisecond keeps the median wait of 8
  // processes (7 holds) well above what a busy machine's scheduler adds to
  // one wait, so that the longest wait says more about the lock than about
  // the load.
  int fairness_millis = 500;
  int fairness_hold_us = 1000;
  std::array<int, 3> fair_processes = {2, 4, 8};
  std::array<int, 4> processes = {1, 2, 4, 8};
  std::array<int, 3> resources = {1, 1000, 100000};
  int startup_runs = 40;  // runs of each program in the start-up rows
  bool quick = false;
};

inline Settings QuickSettings() {
  Settings s;
  s.shape.repetitions = 3;
  s.shape.operations = 20000;
  s.shape.max_ns_per_repetition = 10000000;
  s.rounds = 1;
  s.handoffs = 300;
  s.contention_millis = 100;
  s.fairness_millis = 150;
  s.resources = {1, 1000, 10000};
  s.startup_runs = 8;
  s.quick = true;
  return s;
}

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_SETTINGS_H_
