// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The parts of CheckHost() (ipclock/admin/host_check.h): the target it resolves
// from the options, and one function per group of checks.

#ifndef IPCLOCK_REGISTRY_HOST_CHECK_INTERNAL_H_
#define IPCLOCK_REGISTRY_HOST_CHECK_INTERNAL_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "ipclock/admin/host_check.h"
#include "platform/removeipc.h"

namespace ipclock {
namespace host_check {

// Who and what is checked.
struct Target {
  std::string root = "/";
  bool host = true;
  uid_t uid = 0;
  // The user whose programs run this very process (no other user named,
  // and no tree): only then is their environment known.
  bool is_current_user = true;
  // The registry's name of the store ("flock", "semaphore", ...).
  std::string store = "flock";
  // The user named the store: one that logind cannot touch then makes
  // RemoveIPC information rather than a risk.
  bool explicit_store = false;
  // What RemoveIPC may delete of the store's locks (the registry's IpcKind).
  std::optional<IpcKind> ipc_kind;
  // Lock dirs of a flock store, as the target system sees them. When `when`
  // is set the dir is one candidate of several: which one the user's
  // programs get depends on an environment we do not know
  // (XDG_RUNTIME_DIR), and `when` says in which case it is used.
  struct LockDir {
    std::string dir;
    std::string when;
  };
  std::vector<LockDir> lock_dirs;

  // `path` of the target system, as a path on this host.
  std::string InTree(absl::string_view path) const;
  // A path on this host below the root, as the target system sees it.
  std::string OutOfTree(absl::string_view path) const;
  // " (this host's kernel, not the tree's)" for a tree, else "".
  std::string KernelNote() const;
};

using Level = HostFinding::Level;

// A finding of `check` about `subject`, at `level` until the check says
// otherwise.
inline HostFinding Finding(Level level, std::string check, std::string subject = "") {
  HostFinding f;
  f.level = level;
  f.check = std::move(check);
  f.subject = std::move(subject);
  return f;
}

void CheckRemoveIpcSetting(const Target& target, std::vector<HostFinding>* out);
void CheckLockDirs(const Target& target, std::vector<HostFinding>* out);
void CheckSysvLimits(const Target& target, std::vector<HostFinding>* out);
void CheckIoUring(const Target& target, std::vector<HostFinding>* out);
void CheckTimedWaitSignal(const Target& target, std::vector<HostFinding>* out);

}  // namespace host_check
}  // namespace ipclock

#endif  // IPCLOCK_REGISTRY_HOST_CHECK_INTERNAL_H_
