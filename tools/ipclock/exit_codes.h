// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Exit statuses of `ipclock run`. The conflict status (1) and the command's
// own statuses follow util-linux flock(1), so scripts written for flock keep
// working; ipclock's own failures use the BSD sysexits values, which stay
// clear of the small numbers commands commonly return. `ipclock run --help`
// documents the table; keep the two in step.

#ifndef IPCLOCK_TOOLS_IPCLOCK_EXIT_CODES_H_
#define IPCLOCK_TOOLS_IPCLOCK_EXIT_CODES_H_

#include <sysexits.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ipclock_cli {

// The lock was busy (-n) or the wait ran out (-w); -E changes it.
inline constexpr int kExitConflict = 1;
// `ipclock doctor` found something that breaks locks.
inline constexpr int kExitAtRisk = 1;
inline constexpr int kExitUsage = EX_USAGE;              // 64
inline constexpr int kExitUnavailable = EX_UNAVAILABLE;  // 69
inline constexpr int kExitOsError = EX_OSERR;            // 71
inline constexpr int kExitNoPermission = EX_NOPERM;      // 77
// As POSIX shells report a command they could not run.
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitNotFound = 127;
// A command killed by signal N exits 128+N, as in shells.
inline constexpr int kExitSignalBase = 128;

// The exit status for a store error (never OK, never DeadlineExceeded: a
// wait that ran out is a conflict, not an error).
int ExitCodeForStatus(const absl::Status& status);

// Prints "<who>: <message>" to stderr, dropping the "ipclock: " that library
// messages may start with.
void PrintError(absl::string_view who, const absl::Status& status);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_EXIT_CODES_H_
