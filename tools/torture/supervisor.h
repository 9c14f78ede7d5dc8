// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The supervisor of a torture run: starts the workers, SIGKILLs a random
// holder or waiter at the configured rate and starts a new worker in its
// place, watches for a run that makes no progress, then stops everyone and
// checks that the lock can still be had.

#ifndef IPCLOCK_TOOLS_TORTURE_SUPERVISOR_H_
#define IPCLOCK_TOOLS_TORTURE_SUPERVISOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ipclock/store.h"
#include "torture/config.h"

namespace ipclock_torture {

struct Result {
  std::string store;  // the store's Describe()
  double seconds = 0;
  uint64_t iterations = 0;
  uint64_t kills = 0;
  uint64_t holder_kills = 0;
  uint64_t waiter_kills = 0;
  uint64_t takeovers = 0;
  uint64_t half_steps = 0;
  uint64_t violations = 0;
  uint64_t errors = 0;
  double worst_wait_ms = 0;
  double worst_handover_after_death_ms = 0;
  std::vector<std::string> messages;
  // A CLI storm (storm.h): `iterations` counts critical sections,
  // `holder_kills` kills whose command was inside the lock, `takeovers`
  // deaths inside the lock that the next holder found; of those,
  // `deaths_told` were told. `deaths_told_unseen`: holders told of a death
  // before the dead one's command recorded itself.
  bool storm = false;
  uint64_t deaths_told = 0;
  uint64_t deaths_told_unseen = 0;
};

// Runs the workers on `dsn` (already expanded). FailedPrecondition for a
// store that excludes only threads of one process (in-memory): processes
// cannot share its locks, so there is nothing to torture.
absl::StatusOr<Result> RunTorture(const Config& config, const std::string& dsn);

struct WorkerParams;
// After a run the lock must still be free and usable: a permit lost to a
// kill, a stale lease or a leaked slot shows up here if nowhere else.
// Findings go to `p.record`.
void FinalCheck(const std::shared_ptr<ipclock::Store>& store, const WorkerParams& p);

}  // namespace ipclock_torture

#endif  // IPCLOCK_TOOLS_TORTURE_SUPERVISOR_H_
