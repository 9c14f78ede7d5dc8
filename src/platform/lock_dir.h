// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Opening a lock dir safely. Whoever can write a lock dir can replace the lock
// files in it, and whoever can write a dir above it can rename it away and
// put another in its place; either way every lock in it is theirs to break.
// So a lock dir is used only when nobody but us and root can do that, along
// its whole path: the rule OpenSSH applies to ~/.ssh (StrictModes) and sudo
// to its own files, with one relaxation for sticky dirs such as /tmp.
//
// The rule, for processes running as uid U:
//   * The lock dir is owned by U or root, and not writable by all unless it
//     is sticky (CheckLockDirSafety). It may be group-writable: a lock dir
//     shared by a group (`dir_mode=0770`) trusts that group with its locks.
//   * Every dir that resolving its path passes through (every ancestor, and
//     every dir a symbolic link on the way leads through) is owned by U or
//     root, and writable by no one else: neither its group nor all users may
//     write it (mode & 022 == 0).
//   * Except: an ancestor that is writable by others but sticky (S_ISVTX,
//     as /tmp, /dev/shm, /run/lock) is accepted when it is owned by U or
//     root and the entry we pass through in it is owned by U or root. In a
//     sticky dir only an entry's owner, the dir's owner and root may rename
//     or remove the entry (unlink(2), rename(2): EPERM), so the other users
//     who may write /tmp can add names beside /tmp/ipclock-1000 but cannot
//     move it away or replace it. OpenSSH refuses such ancestors outright;
//     refusing them here would refuse every lock dir under /tmp.
//
// A dir on the path that does not exist yet is created by us (owned by U,
// with the store's `dir_mode`), so it satisfies the rule by construction.

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

// Opens `path` as a directory, creating it and any missing parents with
// `create_mode` first. Resolves the path one component at a time from "/",
// checking every dir it passes through as CheckLockDirAncestors() does, and
// opens the last component relative to its checked parent
// (O_DIRECTORY|O_NOFOLLOW), so nothing can be swapped between the checks and
// the open. Then checks the dir itself (CheckLockDirSafety) and that we may
// create files in it. `store` names the store in errors. PermissionDenied
// for an unsafe dir or ancestor, or a symbolic link as the lock dir;
// FailedPrecondition for a path that is not a dir; the OS error otherwise.
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

// Checks the dirs that resolving the lock dir `path` (absolute) passes
// through, for processes running as `uid`, by the rule above: not the lock
// dir itself (CheckLockDirSafetyFor does that). Symbolic links on the way are
// followed as open(2) would, and the dirs they lead through are checked too.
// `root` is the tree the path is resolved in: "/" for this host, or an image
// tree (`ipclock doctor --root`), in which absolute links stay inside the
// tree and messages name paths as seen inside it.
//
// OK when every dir passed through is safe, including when a component does
// not exist yet (the first lock creates it, owned by `uid`). PermissionDenied
// naming the first unsafe dir, its owner and mode, and why, e.g.
//   flock:///srv/app/locks: refusing lock dir /srv/app/locks: its ancestor
//   /srv/app (owner uid 1001, mode 0755) is owned by another user, who could
//   rename the lock dir away and put another in its place
// InvalidArgument for a relative path; the OS error (e.g. EACCES, ELOOP) if
// the path cannot be resolved.
absl::Status CheckLockDirAncestors(const std::string& path, uid_t uid,
                                   absl::string_view store,
                                   const std::string& root = "/");

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_LOCK_DIR_H_
