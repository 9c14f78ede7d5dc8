// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Where the benchmark's locks live, named after its pid so that two runs do
// not meet, and removed at the end: a lock dir on tmpfs (/dev/shm), two shm
// segments, and POSIX semaphores under one prefix.

#ifndef IPCLOCK_TOOLS_BENCH_WORKSPACE_H_
#define IPCLOCK_TOOLS_BENCH_WORKSPACE_H_

#include <string>

namespace ipclock_bench {

// The shm table of the 100k-resource row: room for the 100,000 resources at
// three quarters full (shm_store.h, "Capacity").
inline constexpr int kBigShmCapacity = 131072;
inline constexpr int kBigShmResources = 131072;

struct Workspace {
  std::string dir;         // lock files, on tmpfs
  std::string tag;         // "ipclock-bench.<pid>"
  std::string shm_dsn;     // default capacity
  std::string fair_shm_dsn;  // fair=true (priority-inheritance mutexes)
  std::string big_shm_dsn; // kBigShmCapacity
  std::string flock_dsn;
  std::string posix_dsn;

  bool Create();
  // Removes the dir and every IPC object named with `tag`.
  void Remove();
};

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_WORKSPACE_H_
