// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list`: the locks held now in one store, from ipclock::ListHeldLocks().

#ifndef IPCLOCK_TOOLS_IPCLOCK_LIST_COMMAND_H_
#define IPCLOCK_TOOLS_IPCLOCK_LIST_COMMAND_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace ipclock_cli {

struct ListOptions {
  bool show_help = false;
  // --store; empty for the default store.
  std::string store_dsn;
  // --key: the one resource to show (named, even on stores that keep only a
  // hash of it).
  std::optional<std::string> key;
  // --format (--json is --format=json).
  enum class Format { kTable, kJson, kOpenMetrics };
  Format format = Format::kTable;
};

// Parses `argv` (argv[0] is "list"). InvalidArgument, with a message fit
// for stderr, for anything else.
absl::StatusOr<ListOptions> ParseListOptions(int argc, char** argv);

// Prints the locks and returns the exit status: 0 (held locks or none),
// 64 for a usage error or a store that cannot be listed, else as
// exit_codes.h says.
int ListCommand(const ListOptions& options);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_LIST_COMMAND_H_
