// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Talking to the systemd journal without libsystemd.
//
// systemd connects a service's stderr to the journal with a stream socket
// and says so in $JOURNAL_STREAM ("DEV:INO" of that socket, in decimal).
// Lines on such a stream may start with a syslog priority, "<3>" for an
// error, which journald takes off and keeps as the entry's PRIORITY=. A
// process may instead send whole entries, with fields of its own, as
// datagrams to journald's socket (the native protocol): "NAME=value\n" per
// field, or, for a value holding a newline, "NAME\n", its length as 64-bit
// little-endian and the value and "\n".
//
// The variable alone proves nothing: a service's child that redirected its
// stderr elsewhere still inherits it. Only a stderr whose device and inode
// match it is the journal's.

#ifndef IPCLOCK_PLATFORM_JOURNAL_H_
#define IPCLOCK_PLATFORM_JOURNAL_H_

#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ipclock {

// Whether stderr is the journal's stream: $JOURNAL_STREAM is set and names
// stderr's device and inode. Asked once per process (a getenv, and one
// fstat(2) only when the variable is set).
bool StderrIsJournalStream();

// Whether `value` ("DEV:INO") names the file open as `fd`.
bool JournalStreamNames(absl::string_view value, int fd);

// The socket of journald's native protocol: $IPCLOCK_JOURNAL_SOCKET (for
// tests, and for hosts where journald listens elsewhere) or
// /run/systemd/journal/socket.
std::string JournalSocketPath();

using JournalField = std::pair<absl::string_view, absl::string_view>;

// The datagram of one entry (see above).
std::string EncodeJournalEntry(absl::Span<const JournalField> fields);

// Sends one entry to JournalSocketPath(). False when it could not be sent
// (no journald there, a full socket: the caller writes to stderr instead).
// Never blocks.
bool SendJournalEntry(absl::Span<const JournalField> fields);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_JOURNAL_H_
