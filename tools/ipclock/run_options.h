// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The command line of `ipclock run`, parsed and checked.

#ifndef IPCLOCK_TOOLS_IPCLOCK_RUN_OPTIONS_H_
#define IPCLOCK_TOOLS_IPCLOCK_RUN_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/store.h"

namespace ipclock_cli {

struct RunOptions {
  bool show_help = false;
  // Resources to lock in the store: sorted and without duplicates, which is
  // the order they are acquired in (see ParseRunOptions).
  std::vector<std::string> keys;
  // --file: the exact path to flock, as flock(1) does. Empty with --key.
  std::string file;
  // --store; empty for the default store.
  std::string store_dsn;
  ipclock::LockMode mode = ipclock::LockMode::kExclusive;
  // How long to wait for the lock: zero tries once (-n, -w 0), infinite
  // waits for as long as it takes (the default).
  absl::Duration wait = absl::InfiniteDuration();
  int conflict_exit_code = 1;
  bool verbose = false;
  uint32_t permits = 1;
  // --limit: a semaphore of this many permits on any store (slot locks
  // where the store does not count with weights natively); 0 without.
  uint32_t limit = 0;
  // --weight: the permits of `limit` this run takes, all or none.
  uint32_t weight = 1;
  // --ttl: the lease on stores whose locks expire (renewed by the watch at a
  // third of its length while COMMAND runs); no effect on other stores.
  absl::Duration ttl = absl::Seconds(300);
  // --check-interval: how often the watch asks the store whether each lock
  // is still held, when nothing reports a loss sooner.
  absl::Duration check_interval = absl::Seconds(1);
  // --kill-after: after a loss, how long COMMAND has between SIGTERM and
  // SIGKILL.
  // Short: the lock may already be another holder's, so this is how long
  // two commands may run at once; a command that heeds SIGTERM ends well
  // within it (doc/ipclock.1, "Kill-after and fencing").
  absl::Duration kill_after = absl::Seconds(1);
  // --notify-ready: READY=1 to the service manager once the locks are held
  // and COMMAND started (run_report.h).
  bool notify_ready = false;
  // --notify-wait: EXTEND_TIMEOUT_USEC= to the service manager while
  // waiting for a lock.
  bool notify_wait = false;
  // -o, --close: COMMAND does not inherit the flock lock's descriptor (as
  // flock(1) -o): it is bound to the lock by SIGKILL at ipclock's death,
  // as on the other stores.
  bool close_lock = false;
  // The program and its arguments; `-c STRING` becomes /bin/sh -c STRING.
  std::vector<std::string> command;
};

// Parses `argv` (argv[0] is "run"). InvalidArgument, with a message fit for
// stderr, for anything that is not a valid `ipclock run` command line.
absl::StatusOr<RunOptions> ParseRunOptions(int argc, char** argv);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_RUN_OPTIONS_H_
