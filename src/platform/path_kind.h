// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What a path names, learnt with stat(2) and statfs(2) and never by opening
// it: opening a FIFO waits for a writer, opening a device may do anything,
// and a client library that opens a path it was given (a SQLite database, a
// server's Unix socket) does not ask first.

#ifndef IPCLOCK_PLATFORM_PATH_KIND_H_
#define IPCLOCK_PLATFORM_PATH_KIND_H_

#include <sys/types.h>

#include <string>

namespace ipclock {

struct PathKind {
  // stat(2)'s errno: 0 when the path names something (symlinks followed),
  // ENOENT when nothing is there.
  int error = 0;
  // The S_IFMT bits of what it names, when `error` is 0.
  mode_t type = 0;
  // On a filesystem the kernel makes up (proc, sysfs, debugfs, tracefs,
  // securityfs, cgroup, bpf, configfs, efivarfs, pstore, devpts): its files
  // read as regular files but are no place for data. For a missing path,
  // where its parent dir is.
  bool kernel_fs = false;
};

PathKind InspectPathKind(const std::string& path);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_PATH_KIND_H_
