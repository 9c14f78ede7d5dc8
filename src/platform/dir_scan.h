// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Looking into a dir of lock files (or /dev/shm) from outside: which regular
// files it holds, and the first bytes of one, without creating, locking or
// waiting on anything.
//
// Entries are stat'ed through the dir's descriptor without following links
// (a link in a lock dir is not a lock file any store would use), and a file
// is opened O_NOFOLLOW|O_NONBLOCK and checked with fstat(2) before it is
// read, so that a FIFO or device put in its place is never read or waited
// on.

#ifndef IPCLOCK_PLATFORM_DIR_SCAN_H_
#define IPCLOCK_PLATFORM_DIR_SCAN_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ipclock {

struct DirFile {
  std::string name;
  unsigned dev_major = 0;
  unsigned dev_minor = 0;
  uint64_t inode = 0;
};

struct DirListing {
  std::vector<DirFile> files;
  // The dir is on btrfs, whose stat(2) device numbers are per subvolume
  // and match nothing in /proc/locks (see proc_locks.h).
  bool btrfs = false;
};

// The regular files in `dir` whose names `wanted` accepts (every file when it
// is empty). NotFound for a dir that does not exist; the OS error, naming
// `who`, otherwise.
absl::StatusOr<DirListing> ListRegularFiles(
    const std::string& dir, absl::string_view who,
    const std::function<bool(absl::string_view name)>& wanted = nullptr);

struct FileHead {
  std::string bytes;  // at most the bytes asked for
  int64_t mtime_seconds = 0;
};

// Up to `max_bytes` from the start of the regular file `path`, and its mtime.
// FailedPrecondition for a file that is not regular; the OS error otherwise.
absl::StatusOr<FileHead> ReadFileHead(const std::string& path, size_t max_bytes,
                                      absl::string_view who);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_DIR_SCAN_H_
