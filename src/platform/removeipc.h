// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Will systemd-logind delete what a store keeps its locks in?
//
// With `RemoveIPC=yes` in logind.conf (systemd's default when nothing sets
// it), logind deletes a user's SysV IPC objects, POSIX shared memory (the
// files in /dev/shm, named POSIX semaphores among them) and POSIX message
// queues when that user's last session ends. System users (uid <=
// SYS_UID_MAX) and root are exempt, and so is a user with lingering on
// (`loginctl enable-linger`), whose user manager never goes away. Separately,
// `/run/user/<uid>` (XDG_RUNTIME_DIR) is removed when user <uid>'s last
// session ends, whatever RemoveIPC says, unless that user lingers.
//
// A lock deleted under its holder is worse than an error: the next process
// makes a fresh object of the same name and both believe they hold the lock.
// This file only reads the configuration and says what is at risk; the
// policy (warn, refuse, ignore) is applied by core/removeipc_guard.h.
//
// Everything is read below a root dir ("/" for this host) so that tests and
// image builders can check a tree that is not the running system.
//
// Where this differs from logind on purpose:
//   * logind's SYS_UID_MAX is fixed when systemd is compiled (from the build
//     host's login.defs); it is read here from <root>/etc/login.defs, which
//     matches on every distribution that has not edited the file since.
//   * Whether logind runs at all is not checked: a tree without systemd still
//     gets systemd's default (RemoveIPC=yes).

#ifndef IPCLOCK_PLATFORM_REMOVEIPC_H_
#define IPCLOCK_PLATFORM_REMOVEIPC_H_

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace ipclock {

// What a store keeps its locks in.
enum class IpcKind {
  kSysV,      // SysV semaphores or shared memory (`semaphore`)
  kPosixShm,  // /dev/shm: shm_open, named sem_open (`shm`, `posix-semaphore`)
  kLockDir,   // lock files in a dir (`flock`)
};
// How many IpcKinds there are, for tables indexed by kind.
inline constexpr size_t kIpcKinds = 3;

// The name of `kind` in messages: "SysV IPC", "POSIX shared memory",
// "lock dir".
absl::string_view IpcKindName(IpcKind kind);

struct RemoveIpcSetting {
  bool remove_ipc = true;
  // "<file>:<line>" of the assignment that decided, or "systemd default".
  std::string source = "systemd default";
};

// RemoveIPC= as systemd-logind would read it below `root`: the main
// logind.conf (the first found of etc/, run/, usr/local/lib/, usr/lib/
// systemd/), then every *.conf in the logind.conf.d dirs under those (and
// lib/, for distributions that have not merged /usr) in file-name order
// across the dirs, a name in an earlier dir masking the same name in later
// ones. The last valid assignment in a [Login] section wins; invalid values
// are skipped as logind skips them.
RemoveIpcSetting ReadRemoveIpcSetting(absl::string_view root);

// The parsers behind ReadRemoveIpcSetting() and ReadSysUidMax(), on text
// already in memory (for tests and fuzzing). ApplyLogindConfText applies
// every valid RemoveIPC= of a [Login] section to `setting`, naming `path` as
// its source. ParseSysUidMax returns the last SYS_UID_MAX line's value, if
// any parses.
void ApplyLogindConfText(absl::string_view path, absl::string_view text,
                         RemoveIpcSetting* setting);
std::optional<uid_t> ParseSysUidMax(absl::string_view text);

// SYS_UID_MAX from <root>/etc/login.defs, 999 when absent or unparsable.
// `source`, if given, gets the file or "default".
uid_t ReadSysUidMax(absl::string_view root, std::string* source = nullptr);

// systemd's boolean syntax: 1/yes/y/true/t/on and 0/no/n/false/f/off, any
// case. nullopt for anything else (including the empty string).
std::optional<bool> ParseSystemdBoolean(absl::string_view text);

// Whether user `uid` has lingering on below `root`
// (<root>/var/lib/systemd/linger/<user name>). The name comes from
// <root>/etc/passwd, or from the system's user database when `root` is "/".
bool IsLingering(absl::string_view root, uid_t uid);

struct RemoveIpcReport {
  IpcKind kind = IpcKind::kSysV;
  // The lock dir checked (kLockDir), normalized.
  std::string lock_dir;

  bool remove_ipc = true;
  std::string source;
  uid_t sys_uid_max = 999;
  uid_t uid = 0;
  bool is_system_user = false;
  bool lingering = false;

  // logind will delete the locks when a session ends.
  bool at_risk = false;
  // A weaker risk: a tmp cleaner (systemd-tmpfiles) may delete lock files
  // that have not been touched for a while, held ones included.
  bool may_be_cleaned = false;

  // Why, in a sentence; empty when nothing is at risk.
  std::string reason;
  // What to change, in a sentence; empty when nothing is at risk.
  std::string advice;
};

// How much a check reads.
enum class RemoveIpcDetail {
  // Everything a report can say: RemoveIPC=, its source, SYS_UID_MAX and
  // lingering, whenever they apply to `kind` (`ipclock doctor`).
  kFull,
  // Only what can change at_risk and may_be_cleaned (and the reason and
  // advice that go with them): a store's factory, on every start of a
  // program, reads no configuration for root or for a lock dir outside
  // /dev/shm and /run/user. The other fields may keep their defaults.
  kVerdict,
};

// Checks what a store of `kind` run by `uid` risks below `root`. `lock_dir`
// is the store's lock dir as the target system sees it (kLockDir only). For
// a lock dir, RemoveIPC= and SYS_UID_MAX are read only when it is in
// /dev/shm: elsewhere logind's IPC cleanup cannot reach it.
RemoveIpcReport CheckRemoveIpc(absl::string_view root, uid_t uid, IpcKind kind,
                               absl::string_view lock_dir = {},
                               RemoveIpcDetail detail = RemoveIpcDetail::kFull);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_REMOVEIPC_H_
