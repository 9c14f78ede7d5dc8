// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock doctor`: what on this host, or in a system tree, would break one
// user's locks, and what to change; ipclock::CheckHost() printed.

#ifndef IPCLOCK_TOOLS_IPCLOCK_DOCTOR_COMMAND_H_
#define IPCLOCK_TOOLS_IPCLOCK_DOCTOR_COMMAND_H_

#include <string>

#include "absl/status/statusor.h"

namespace ipclock_cli {

struct DoctorOptions {
  bool show_help = false;
  // --store; empty for the default store.
  std::string store_dsn;
  // --root: a system tree to read configuration from; "/" for this host.
  std::string root = "/";
  // --user: a name or a uid; empty for this process's effective uid.
  std::string user;
  bool json = false;
};

// Parses `argv` (argv[0] is "doctor"). InvalidArgument, with a message fit
// for stderr, for anything else.
absl::StatusOr<DoctorOptions> ParseDoctorOptions(int argc, char** argv);

// Runs the checks, prints the findings and returns the exit status: 0 when
// nothing puts locks at risk, 1 when something does, 64 for a usage error
// (an unknown user, a bad DSN, a root that is not a dir).
int DoctorCommand(const DoctorOptions& options);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_DOCTOR_COMMAND_H_
