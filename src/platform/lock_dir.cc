// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/lock_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "platform/errors.h"

namespace ipclock {

namespace {

// mkdir -p: creates each missing component of `path` with `mode`. Existing
// components are left as they are (their safety is checked on the last one).
int MakeDirs(const std::string& path, mode_t mode) {
  if (mkdir(path.c_str(), mode) == 0 || errno == EEXIST) return 0;
  if (errno != ENOENT) return errno;
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return ENOENT;
  if (int err = MakeDirs(path.substr(0, slash), mode); err != 0) return err;
  if (mkdir(path.c_str(), mode) == 0 || errno == EEXIST) return 0;
  return errno;
}

}  // namespace

absl::Status CheckLockDirSafety(const struct stat& st, const std::string& path,
                                absl::string_view store) {
  return CheckLockDirSafetyFor(st, path, store, geteuid());
}

absl::Status CheckLockDirSafetyFor(const struct stat& st, const std::string& path,
                                   absl::string_view store, uid_t me) {
  if (!S_ISDIR(st.st_mode)) {
    return StoreError(absl::StatusCode::kFailedPrecondition, store, "",
                      absl::StrCat("lock dir ", path, " is not a directory"));
  }
  if (st.st_uid != me && st.st_uid != 0) {
    return StoreError(
        absl::StatusCode::kPermissionDenied, store, "",
        absl::StrFormat("refusing lock dir %s: it is owned by uid %d, not by "
                        "uid %d or root, and its owner could replace our lock "
                        "files",
                        path, st.st_uid, me));
  }
  if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return StoreError(
        absl::StatusCode::kPermissionDenied, store, "",
        absl::StrFormat("refusing lock dir %s: mode %04o is world-writable "
                        "without the sticky bit, so anyone could replace our "
                        "lock files (chmod o-w or +t)",
                        path, st.st_mode & 07777));
  }
  return absl::OkStatus();
}

absl::StatusOr<ScopedFd> OpenLockDir(const std::string& path, mode_t create_mode,
                                     absl::string_view store) {
  if (path.empty() || path[0] != '/') {
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat("lock dir \"", path,
                                   "\" must be an absolute path"));
  }
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  ScopedFd fd(open(path.c_str(), flags));
  if (!fd.valid() && errno == ENOENT) {
    if (int err = MakeDirs(path, create_mode); err != 0) {
      return ErrnoError(err, store, "", absl::StrCat("create lock dir ", path));
    }
    fd.reset(open(path.c_str(), flags));
  }
  if (!fd.valid()) {
    int err = errno;
    if (err == ELOOP || err == ENOTDIR) {
      struct stat lst;
      if (lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
        return StoreError(absl::StatusCode::kPermissionDenied, store, "",
                          absl::StrCat("refusing lock dir ", path,
                                       ": it is a symbolic link"));
      }
    }
    return ErrnoError(err, store, "", absl::StrCat("open lock dir ", path));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    return ErrnoError(errno, store, "", absl::StrCat("fstat lock dir ", path));
  }
  if (absl::Status s = CheckLockDirSafety(st, path, store); !s.ok()) return s;
  if (faccessat(fd.get(), ".", W_OK | X_OK, AT_EACCESS) != 0) {
    return ErrnoError(errno, store, "",
                      absl::StrCat("lock dir ", path, " is not writable"));
  }
  return fd;
}

}  // namespace ipclock
