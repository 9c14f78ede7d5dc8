// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Opening a lock dir safely. Whoever can write a lock dir can replace the lock
// files in it, and with them every lock, so a dir is only used when nobody but
// us (and root) can do that: see CheckLockDirSafety().

#ifndef IPCLOCK_PLATFORM_LOCK_DIR_H_
#define IPCLOCK_PLATFORM_LOCK_DIR_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "platform/scoped_fd.h"

namespace ipclock {

// Opens `path` as a directory (O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC), creating it
// and any missing parents with `create_mode` first, then checks it with
// CheckLockDirSafety(). `store` names the store in errors.
absl::StatusOr<ScopedFd> OpenLockDir(const std::string& path, mode_t create_mode,
                                     absl::string_view store);

// OK when `st` (the dir at `path`) is safe for the effective uid: owned by it
// or by root, and not world-writable unless the sticky bit is set (then others
// can add files but not replace ours). PermissionDenied otherwise.
absl::Status CheckLockDirSafety(const struct stat& st, const std::string& path,
                                absl::string_view store);

// The same for processes running as `uid` (`ipclock doctor --user`).
absl::Status CheckLockDirSafetyFor(const struct stat& st, const std::string& path,
                                   absl::string_view store, uid_t uid);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_LOCK_DIR_H_
