// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: admin/host_check.h
// -----------------------------------------------------------------------------
//
// For tools that inspect or check a host, as the `ipclock` CLI does; programs
// that only take locks do not need it.
//
// What on this host, or in a system tree such as an image before it boots,
// would break the locks of one user's programs, and what to change: this is
// `ipclock doctor`, for programs that want to check at start-up or in an
// image build.
//
// The checks:
//   removeipc             systemd-logind's RemoveIPC=, which deletes a user's
//                         SysV semaphores and /dev/shm objects at logout
//                         (held locks included)
//   lock-dir-lifetime     a lock dir in /run/user/UID (removed at logout),
//                         /dev/shm, or under /tmp or /var/tmp (cleaned by age)
//   lock-dir-permissions  a lock dir that others could write or replace: the
//                         dir itself, a symlink, or any dir above it that a
//                         user other than root and the target user owns or
//                         could write (the rule of OpenSSH's StrictModes),
//                         since whoever can write a dir's parent can rename
//                         the dir away and put another in its place
//   lock-dir-filesystem   a lock dir on NFS, SMB/CIFS, FUSE, 9p, Ceph or AFS
//   sysv-limits           kernel.sem and the sets in use
//   io_uring              whether io_uring is enabled and works here
//   timed-wait-signal     the real-time signal timed flock waits use
//
// With a root other than "/", configuration (logind.conf and its drop-ins,
// login.defs, passwd, the linger flags) and lock dirs are read from the tree;
// the kernel seen is this host's, so what is said of it is information only.
// Nothing is created, locked or changed. Files are read only if regular
// (opened non-blocking, so a FIFO planted in an untrusted tree is refused,
// never waited on).

#ifndef IPCLOCK_ADMIN_HOST_CHECK_H_
#define IPCLOCK_ADMIN_HOST_CHECK_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ipclock {

struct HostFinding {
  enum class Level {
    kOk,    // checked, nothing wrong
    kInfo,  // worth knowing; does not break locks by itself
    kRisk,  // breaks locks
  };
  Level level = Level::kOk;
  // A short stable name for scripts (see the list above).
  std::string check;
  // What was checked (a dir, a file), if anything in particular; as the
  // target system sees it.
  std::string subject;
  std::string message;
  // What to change; empty when nothing needs changing.
  std::string advice;
};

struct HostCheckOptions {
  // The store whose locks are checked. Empty: the default store; a user's
  // default lock dir that depends on an environment this process cannot see
  // (whether their programs run in a login session) is then reported as
  // information rather than judged.
  std::string store_dsn;
  // An absolute path: "/" for this host, else the root of a system tree.
  std::string root = "/";
  // A user name (looked up in <root>/etc/passwd for a tree) or a uid; empty
  // for this process's effective uid.
  std::string user;
};

struct HostReport {
  uid_t uid = 0;
  // Empty when the user database has no entry for `uid`.
  std::string user_name;
  std::string root;
  // `root` is this host ("/").
  bool host = true;
  // The store's kind, as the registry names it: "flock", "semaphore", ...
  std::string store;
  // In the order the checks ran; at least one per check.
  std::vector<HostFinding> findings;
  // How many findings are risks.
  int risks = 0;
};

// Runs every check. InvalidArgument for a bad DSN, a root that is not an
// absolute path to a dir, or a user that is not found.
absl::StatusOr<HostReport> CheckHost(const HostCheckOptions& options);

}  // namespace ipclock

#endif  // IPCLOCK_ADMIN_HOST_CHECK_H_
