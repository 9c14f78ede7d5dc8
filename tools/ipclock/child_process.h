// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Running the command of `ipclock run` as a child process.

#ifndef IPCLOCK_TOOLS_IPCLOCK_CHILD_PROCESS_H_
#define IPCLOCK_TOOLS_IPCLOCK_CHILD_PROCESS_H_

#include <signal.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace ipclock_cli {

// Runs `command` (execvp: a PATH search, no shell) and waits for it to end,
// passing SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 on to it.
// Returns its exit status as a shell reports it: N for exit(N), 128+N for
// death by signal N, 127 or 126 when it could not be executed. The child
// starts with `child_mask` as its signal mask (ipclock's mask when it
// started; the lock code may block signals of its own).
//
// While the child runs, `tick` is called every `tick_every` (never when that
// is infinite): leases on expiring stores must be renewed for as long as the
// command runs.
//
// The forwarded signals stay blocked in ipclock after this returns, so that
// one arriving late cannot kill ipclock before it has released its locks.
int RunChild(const std::vector<std::string>& command, const sigset_t& child_mask,
             absl::Duration tick_every = absl::InfiniteDuration(),
             const std::function<void()>& tick = nullptr);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_CHILD_PROCESS_H_
