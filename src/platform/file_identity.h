// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Which file a path names now, for stores whose locks live in a file that
// a library opens by path (SQLite): a file deleted or replaced under an open
// connection goes on working for that connection, in a file nobody else
// sees any more.

#ifndef IPCLOCK_PLATFORM_FILE_IDENTITY_H_
#define IPCLOCK_PLATFORM_FILE_IDENTITY_H_

#include <sys/types.h>

#include <optional>
#include <string>

#include "platform/scoped_fd.h"

namespace ipclock {

struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  friend bool operator==(const FileIdentity& a, const FileIdentity& b) {
    return a.dev == b.dev && a.ino == b.ino;
  }
  friend bool operator!=(const FileIdentity& a, const FileIdentity& b) { return !(a == b); }
};

// The file `path` names now (stat(2), following symbolic links); nullopt
// when there is none or it cannot be looked at.
std::optional<FileIdentity> IdentityOf(const std::string& path);

// `path` opened read-only, for the watch on held locks to put an inotify
// watch on (its unlinking or renaming shows as an event); an invalid fd when
// it cannot be opened.
ScopedFd OpenForWatching(const std::string& path);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_FILE_IDENTITY_H_
