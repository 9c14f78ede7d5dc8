// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the subcommands' getopt_long loops share.

#ifndef IPCLOCK_TOOLS_IPCLOCK_GETOPT_UTIL_H_
#define IPCLOCK_TOOLS_IPCLOCK_GETOPT_UTIL_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

struct option;  // <getopt.h>

namespace ipclock_cli {

// Readies getopt_long for a fresh parse that reports errors itself: our
// messages name the subcommand and point at its --help.
void ResetGetopt();

// What was wrong when getopt_long returned ':' (a missing argument; the
// option string must start with ':' or "+:") or '?' (an unknown option),
// e.g. "unknown option: --frob". Call right after that return.
std::string GetoptProblem(int opt, char** argv);

// SECS as a duration: a number of seconds, fractions allowed, at least
// `min` (and finite). InvalidArgument naming `option` otherwise.
absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view option, const char* text,
                                            absl::Duration min);

// InvalidArgument with `message`: a usage error, which main() prints with
// a pointer to `ipclock COMMAND --help` (PrintUsageError).
absl::Status UsageError(absl::string_view message);

// Parses the options of a subcommand that takes no operands: calls
// `handle(opt, optarg)` for each option getopt_long returns other than 'h'
// (which sets `*show_help` and stops), returning the first error it gives.
// `short_options` must start with ':'. Unknown options, missing arguments
// and operands are usage errors.
absl::Status ParseOptionsOnly(
    int argc, char** argv, const char* short_options, const struct option* long_options,
    bool* show_help,
    const std::function<absl::Status(int opt, const char* arg)>& handle);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_GETOPT_UTIL_H_
