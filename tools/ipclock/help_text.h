// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The texts of `ipclock --help` and `ipclock run --help`.

#ifndef IPCLOCK_TOOLS_IPCLOCK_HELP_TEXT_H_
#define IPCLOCK_TOOLS_IPCLOCK_HELP_TEXT_H_

#include <string>

namespace ipclock_cli {

std::string MainHelp();
std::string RunHelp();

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_HELP_TEXT_H_
