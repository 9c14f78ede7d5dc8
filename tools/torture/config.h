// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What one torture run does, from the command line.

#ifndef IPCLOCK_TOOLS_TORTURE_CONFIG_H_
#define IPCLOCK_TOOLS_TORTURE_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ipclock_torture {

struct Config {
  std::string dsn;       // as given; "{tmpdir}" and "{shm}" are expanded
  std::string resource;  // default: "torture-<supervisor pid>"
  int procs = 4;
  // Stop after `seconds`, or once `iterations` (and `min_kills`) are
  // reached; whichever is given. With neither, 10 s.
  double seconds = 0;
  uint64_t iterations = 0;
  uint64_t min_kills = 0;
  // 0: no kills.
  int kill_every_ms = 0;
  // Whom the kills aim at. Waiters only or holders only isolate one side of
  // a handover (a store with a known window on one side can still be
  // tortured on the other).
  enum class Victims { kAny, kHolders, kWaiters };
  Victims victims = Victims::kAny;
  // Longest time a holder keeps the lock (a random part of it each time),
  // so that kills land on holders as well as on waiters.
  int hold_us = 200;
  // Lease of each lock on expiring stores; a killed holder's lock lasts
  // this long.
  int ttl_ms = 2000;
  // A worker that waits longer than this for the lock is starved: a
  // liveness violation. 0: 10 s, plus the lease on expiring stores.
  int wait_bound_ms = 0;
  bool json = false;
  // A CLI storm (storm.cc) instead of library workers: `procs` runs of
  // `cli run` on the lock, each running `section` (torture-section; empty:
  // the one beside this program) as its command. A kill SIGSTOPs one
  // `ipclock`, SIGKILLs its command and the command's group, then the
  // `ipclock`, at random pauses of 0 to `kill_every_ms`.
  std::string cli;
  std::string section;
  // Runs on a store whose locks exclude nothing between processes
  // (in-memory): every check must then fail. It tests torture itself.
  bool allow_process_scope = false;
};

// Parses argv (without argv[0]). InvalidArgument with a usage hint.
absl::StatusOr<Config> ParseArgs(int argc, char** argv);

extern const char kUsage[];

}  // namespace ipclock_torture

#endif  // IPCLOCK_TOOLS_TORTURE_CONFIG_H_
