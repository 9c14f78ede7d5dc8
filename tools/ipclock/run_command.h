// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock run`: acquire, run the command, release.

#ifndef IPCLOCK_TOOLS_IPCLOCK_RUN_COMMAND_H_
#define IPCLOCK_TOOLS_IPCLOCK_RUN_COMMAND_H_

#include <signal.h>

#include <vector>

#include "run_options.h"

namespace ipclock_cli {

// Runs `options.command` while holding the locks `options` names and returns
// the exit status (see exit_codes.h). `child_mask` is the signal mask the
// command starts with; `inherited`, the descriptors from 3 up that ipclock
// was started with (descriptors.h), the only ones besides the standard
// streams and a flock lock's that the command inherits.
int RunCommand(const RunOptions& options, const sigset_t& child_mask,
               const std::vector<int>& inherited);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_RUN_COMMAND_H_
