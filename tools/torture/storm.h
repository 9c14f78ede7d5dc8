// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A CLI storm: torture through `ipclock run` as users run it, with kills
// that stop the `ipclock` first, so that its command dies while the lock is
// held and nothing but the store can tell the next holder. See config.cc for
// the usage and section.cc for what each command checks.

#ifndef IPCLOCK_TOOLS_TORTURE_STORM_H_
#define IPCLOCK_TOOLS_TORTURE_STORM_H_

#include <string>

#include "absl/status/statusor.h"
#include "torture/config.h"
#include "torture/supervisor.h"

namespace ipclock_torture {

// Runs the storm on `dsn` (already expanded). InvalidArgument when the CLI
// or the section program cannot be run.
absl::StatusOr<Result> RunStorm(const Config& config, const std::string& dsn);

}  // namespace ipclock_torture

#endif  // IPCLOCK_TOOLS_TORTURE_STORM_H_
