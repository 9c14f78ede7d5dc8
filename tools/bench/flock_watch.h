// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// How soon a LockWatch reports a flock lock lost through inotify: its lock
// file deleted, or its lock dir renamed, by this process while the watch's
// thread sleeps in poll(2). The watch's interval is a minute, so every
// report measured comes from inotify.

#ifndef IPCLOCK_TOOLS_BENCH_FLOCK_WATCH_H_
#define IPCLOCK_TOOLS_BENCH_FLOCK_WATCH_H_

#include <string>

namespace ipclock_bench {

struct WatchLatency {
  double file_deleted_p50_us = -1;
  double dir_renamed_p50_us = -1;
  double max_us = -1;  // of both
};

// `trials` of each loss, in fresh dirs under `dir`.
WatchLatency FlockWatchLatency(const std::string& dir, int trials);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_FLOCK_WATCH_H_
