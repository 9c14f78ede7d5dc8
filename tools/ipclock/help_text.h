// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The texts of `ipclock --help` and `ipclock COMMAND --help`: the one place
// that lists every option (doc/ipclock.1 says the same at more length; keep
// the two in step).

#ifndef IPCLOCK_TOOLS_IPCLOCK_HELP_TEXT_H_
#define IPCLOCK_TOOLS_IPCLOCK_HELP_TEXT_H_

#include <string>

namespace ipclock_cli {

std::string MainHelp();
std::string RunHelp();
std::string ListHelp();
std::string DoctorHelp();

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_HELP_TEXT_H_
