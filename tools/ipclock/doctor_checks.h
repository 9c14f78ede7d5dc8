// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The checks of `ipclock doctor`: what on this host (or in a system tree)
// would break the locks of one user's programs, and what to change.
//
// With a root dir other than "/", the checks read configuration from the
// tree (logind.conf and its drop-ins, login.defs, the linger flags, passwd)
// and look at lock dirs inside it; the kernel they can see is this host's,
// not the tree's, so what they say about it (io_uring, SysV limits,
// filesystems, signals) is information only.

#ifndef IPCLOCK_TOOLS_IPCLOCK_DOCTOR_CHECKS_H_
#define IPCLOCK_TOOLS_IPCLOCK_DOCTOR_CHECKS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "platform/removeipc.h"

namespace ipclock_cli {

struct Finding {
  enum class Level {
    kOk,    // checked, nothing wrong
    kInfo,  // worth knowing; does not break locks by itself
    kRisk,  // breaks locks: `ipclock doctor` exits 1
  };
  Level level = Level::kOk;
  // A short stable name for scripts: "removeipc", "lock-dir-lifetime",
  // "lock-dir-permissions", "lock-dir-filesystem", "sysv-limits",
  // "io_uring", "timed-wait-signal".
  std::string check;
  // What was checked (a dir, a file), if anything in particular.
  std::string subject;
  std::string message;
  // What to change; empty when nothing needs changing.
  std::string advice;
};

// Who and what to check.
struct DoctorTarget {
  std::string root = "/";
  uid_t uid = 0;
  // The user whose programs run this very process (no --user, or --user
  // naming us, and no --root): only then is their environment known.
  bool is_current_user = true;
  // The store's scheme ("flock", "semaphore", ...).
  std::string scheme = "flock";
  // The user gave --store: a store that logind cannot touch then makes
  // RemoveIPC information rather than a risk.
  bool explicit_store = false;
  // Lock dirs of a flock store, as the target system sees them. When `when`
  // is set the dir is one candidate of several: which one the user's
  // programs get depends on an environment we do not know (XDG_RUNTIME_DIR),
  // and `when` says in which case it is used.
  struct LockDir {
    std::string dir;
    std::string when;
  };
  std::vector<LockDir> lock_dirs;
  std::optional<ipclock::IpcKind> ipc_kind;

  bool host() const;
};

// Sets `lock_dirs` to the default flock dirs a process of `target.uid` may
// get (see ipclock::DefaultFlockDir()).
void SetDefaultFlockDirs(DoctorTarget* target);

// The checks, in the order they are reported.
void CheckRemoveIpcSetting(const DoctorTarget& target, std::vector<Finding>* out);
void CheckLockDirs(const DoctorTarget& target, std::vector<Finding>* out);
void CheckSysvLimits(const DoctorTarget& target, std::vector<Finding>* out);
void CheckIoUring(const DoctorTarget& target, std::vector<Finding>* out);
void CheckTimedWaitSignal(const DoctorTarget& target, std::vector<Finding>* out);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_DOCTOR_CHECKS_H_
