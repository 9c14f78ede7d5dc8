// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Facts about this host and about system trees on it, for `ipclock doctor`
// (registry/host_check): paths and their owners, filesystems, users, io_uring.
// Everything here only looks.

#ifndef IPCLOCK_PLATFORM_HOST_PROBE_H_
#define IPCLOCK_PLATFORM_HOST_PROBE_H_

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ipclock {

struct PathInfo {
  int error = 0;  // errno of the stat; the rest is valid when it is 0
  bool is_dir = false;
  bool is_regular = false;
  bool is_symlink = false;
  uid_t uid = 0;
  mode_t mode = 0;  // permission bits with setuid/setgid/sticky
};

// lstat(2) (`follow` false) or stat(2) of `path`.
PathInfo InspectPath(const std::string& path, bool follow);

// The statfs(2) f_type of the filesystem holding `path`, or nullopt.
std::optional<long> FilesystemMagic(const std::string& path);

struct UserEntry {
  uid_t uid = 0;
  std::string name;
};

// `name_or_uid` (a user name, or a number) as a user: from the system's user
// database (LDAP and sssd users included) when `root` is "/", else from
// <root>/etc/passwd, since the host's users need not be the tree's. A number
// with no entry is still a uid (with an empty name); nullopt for a name that
// is not found.
std::optional<UserEntry> LookUpUser(absl::string_view root, absl::string_view name_or_uid);

// The user of `uid` as above; an empty name if it has no entry.
UserEntry UserOfUid(absl::string_view root, uid_t uid);

// OK if this process can set up an io_uring now; else why not (Unimplemented
// in a build without liburing, the OS error of io_uring_setup otherwise).
absl::Status ProbeIoUring();

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_HOST_PROBE_H_
