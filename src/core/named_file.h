// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The check every store makes of a file that its DSN or one of its options
// names (a SQLite database, a server's Unix socket, a secret, a CA file, a
// lock dir), before it or a client library opens it: a FIFO would block the
// open, a device or a /proc file would be read or written as if it were
// data, and a client library reports neither in words a user can act on.
// The fault classes are those of ipclock/errors.h: a file of the wrong type
// is a configuration fault; a path this user may not look at is refused. A
// server's socket that is not there yet passes (kFine): the connection
// reports it, as a transient fault, since its server may not have started.

#ifndef IPCLOCK_CORE_NAMED_FILE_H_
#define IPCLOCK_CORE_NAMED_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ipclock {

enum class FileKind {
  kRegularFile,  // not on a kernel filesystem such as /proc or /sys either
  kUnixSocket,   // and a path short enough for a socket address
  kDirectory,
};

// What a missing path means.
enum class IfMissing {
  kFine,           // it will be created, or appear when its server starts
  kConfiguration,  // it must exist: a configuration fault
};

// OK when `path` is, or may become, a `kind`. Otherwise a status whose
// message is "ipclock: <where>: <label>: expected <a kind>, not <what it
// is>", where `label` says which option or part names the path (e.g.
// "option unix_socket=/dev/zero").
absl::Status CheckNamedFile(absl::string_view where, absl::string_view label,
                            const std::string& path, FileKind kind, IfMissing if_missing);

// The longest path a Unix socket address holds (sun_path less its NUL).
// Client libraries that copy a longer one cut it short, and then connect
// to another socket or to none.
inline constexpr size_t kMaxUnixSocketPath = 107;

}  // namespace ipclock

#endif  // IPCLOCK_CORE_NAMED_FILE_H_
