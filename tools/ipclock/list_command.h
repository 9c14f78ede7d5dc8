// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list`: the locks held now in one store or several, from
// ipclock::ListHeldLocks(), or one counting semaphore in each
// (ipclock::ListHeldSemaphore()).

#ifndef IPCLOCK_TOOLS_IPCLOCK_LIST_COMMAND_H_
#define IPCLOCK_TOOLS_IPCLOCK_LIST_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ipclock_cli {

struct ListOptions {
  bool show_help = false;
  // --store, each time it is given, in order; empty for the default store.
  std::vector<std::string> store_dsns;
  // --key: the one resource to show (named, even on stores that keep only a
  // hash of it).
  std::optional<std::string> key;
  // --limit: show --key as a counting semaphore of this limit, 0 for a lock.
  uint32_t limit = 0;
  // --format (--json is --format=json).
  enum class Format { kTable, kJson, kOpenMetrics };
  Format format = Format::kTable;
  // --output: the file that takes what would go to stdout (ReplaceFile());
  // empty for stdout.
  std::string output;
};

// Parses `argv` (argv[0] is "list"). InvalidArgument, with a message fit
// for stderr, for anything else.
absl::StatusOr<ListOptions> ParseListOptions(int argc, char** argv);

// Prints the locks of every store, or writes them to --output, and returns
// the exit status: 0 when every store was listed (held locks or none); 64
// for a usage error or a store that can never be listed, before any is
// listed; else the status of the first store that failed (exit_codes.h),
// the others listed all the same.
int ListCommand(const ListOptions& options);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_LIST_COMMAND_H_
