// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: remove_ipc.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/ipclock.h includes it).
//
// What a local store does when systemd-logind may delete its locks at logout
// (`RemoveIPC=yes`, logind's default, deletes a user's SysV IPC objects and
// /dev/shm files when the user's last session ends; /run/user/UID goes at
// logout whatever the setting). A lock deleted under its holder is worse than
// an error: the next process makes a fresh object of the same name and both
// believe they hold the lock (the watch of lock_watch.h reports such a loss
// to the holder). See doc/reliability.md, "RemoveIPC".
//
// The check runs when a `flock`, `shm`, `semaphore` or `posix-semaphore`
// store is built, by `StoreFromDsn()` and by the typed factories alike. The
// DSN option `removeipc=warn|refuse|ignore` or the typed options'
// `remove_ipc` choose the policy. A lock dir under /tmp only ever warns (a
// tmp cleaner deletes by age, not for certain). The configuration is read
// below $IPCLOCK_REMOVEIPC_ROOT if set (to check an image before it boots),
// else below /.

#ifndef IPCLOCK_REMOVE_IPC_H_
#define IPCLOCK_REMOVE_IPC_H_

namespace ipclock {

enum class RemoveIpcPolicy {
  kWarn,    // one diagnostic per risk and process (diagnostics.h), then go on
  kRefuse,  // fail store creation with FailedPrecondition
  kIgnore,  // say nothing
};

}  // namespace ipclock

#endif  // IPCLOCK_REMOVE_IPC_H_
