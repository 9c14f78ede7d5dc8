// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Exit statuses of the ipclock CLI, and how its errors reach stderr. The
// conflict status (1) and the command's own statuses follow util-linux
// flock(1), so scripts written for flock keep working; ipclock's own
// failures use the BSD sysexits values, which stay clear of the small
// numbers commands commonly return, and a lost lock has a value of its own
// just past them. The man page's EXIT STATUS table is the contract; `--help`
// of each command repeats it. Keep the three in step.
//
// The classes, whatever the command:
//   64  the command line asks for something wrong or impossible: a bad
//       option, DSN, resource name or user, or a store that cannot do what
//       is asked (-s without shared locks, --permits without counting, list
//       on a store that cannot be listed)
//   69  the store cannot be reached now: a server down, or a store this
//       build left out
//   71  any other store or system error
//   77  permission denied
//   79  `ipclock run` lost a lock it held

#ifndef IPCLOCK_TOOLS_IPCLOCK_EXIT_CODES_H_
#define IPCLOCK_TOOLS_IPCLOCK_EXIT_CODES_H_

#include <sysexits.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ipclock/diagnostics.h"

namespace ipclock_cli {

// The lock was busy (-n) or the wait ran out (-w); -E changes it.
inline constexpr int kExitConflict = 1;
// `ipclock doctor` found something that breaks locks.
inline constexpr int kExitAtRisk = 1;
inline constexpr int kExitUsage = EX_USAGE;              // 64
inline constexpr int kExitUnavailable = EX_UNAVAILABLE;  // 69
inline constexpr int kExitOsError = EX_OSERR;            // 71
inline constexpr int kExitNoPermission = EX_NOPERM;      // 77
// A lock was lost while COMMAND ran (or found gone at release): whatever
// it protected may have been changed by another holder meanwhile. The first
// value past the sysexits range (64 to 78), so that none of ipclock's own
// failures reads as it.
inline constexpr int kExitLockLost = 79;
static_assert(kExitLockLost == EX__MAX + 1, "outside the sysexits range");
// As POSIX shells report a command they could not run.
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitNotFound = 127;
// A command killed by signal N exits 128+N, as in shells.
inline constexpr int kExitSignalBase = 128;

// The exit status for a store error (never OK, never DeadlineExceeded: a
// wait that ran out is a conflict, not an error).
int ExitCodeForStatus(const absl::Status& status);

// Writes "ipclock: <text>" and a newline to stderr in one write, with every
// control byte of `text` escaped (terminal_text.h). Through the library's
// stderr writer (ipclock/diagnostics.h), so that where stderr is the
// journal the line carries `severity` as its priority. Say() is for what
// goes wrong (a warning), SayInfo() for what --verbose tells.
void Say(absl::string_view text,
         ipclock::DiagnosticSeverity severity = ipclock::DiagnosticSeverity::kWarning);
void SayInfo(absl::string_view text);

// The same for a report about one lock, with its kind, store, resource and
// fence for the journal's fields; `report.text` is the text after
// "ipclock: ".
void Tell(ipclock::Diagnostic report);

// Prints "<who>: <message>" to stderr, escaped, dropping the "ipclock: "
// that library messages start with; an error where stderr is the journal.
void PrintError(absl::string_view who, const absl::Status& status);

// PrintError(), then "Try 'ipclock COMMAND --help'." on a line of its own.
void PrintUsageError(absl::string_view command, const absl::Status& status);

// What `ipclock COMMAND` does when its work fails with `status`: a bad
// argument or configuration (InvalidArgument) is printed as a usage error,
// anything else as an error; returns the exit status (ExitCodeForStatus()).
int FailCommand(absl::string_view command, const absl::Status& status);

// Makes the library's diagnostics (diagnostics.h) go to stderr escaped.
void InstallDiagnosticSink();

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_EXIT_CODES_H_
