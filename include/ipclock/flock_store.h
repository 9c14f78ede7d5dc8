// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: flock_store.h
// -----------------------------------------------------------------------------
//
// The default store: one lock file per resource, locked with flock(2).
//
// Naming. By default a resource's file is `<dir>/sf.<A>.<B>.lock`, exactly as
// Symfony's FlockStore names it (A: the name with runs of bytes outside
// [A-Za-z0-9._-] replaced by '-', cut to 50 bytes; B: 7 characters of the
// base64 SHA-256 of the name). A PHP application using Symfony Lock with the
// same dir and ipclock therefore exclude each other. With `Naming::kPath` the
// resource is a path instead (absolute, or relative to the dir) and that
// exact file is locked, as util-linux flock(1) does.
//
// Lock dir. Created if missing with `dir_mode`. A dir that is a symlink,
// world-writable without the sticky bit, or owned by another user who is not
// root, is refused with PermissionDenied: whoever controls the dir can swap
// lock files under us. The default dir is `/run/lock/ipclock` for root,
// else `$XDG_RUNTIME_DIR/ipclock`, else `/tmp/ipclock-<uid>` (README.md says
// what each choice risks).
//
// Holder record. In Symfony naming mode the store writes a 64-byte record at
// the start of the lock file while it holds an exclusive lock: a fencing
// counter that grows with every exclusive acquisition, and a "held" mark that
// a clean release clears. A holder that finds the mark still set knows the
// previous one died holding the lock (flock releases on death, so the lock
// itself always comes back). PHP ignores the file's content. In `kPath` mode
// the file is never written (it may be a user's data file): no fencing and
// no owner-death reports.
//
// Files are opened O_CLOEXEC|O_NOFOLLOW and never deleted: deleting a lock
// file that others have open lets two processes hold "the same" lock on two
// different inodes. A file that was unlinked or replaced while we waited for
// it (a tmp cleaner) is detected after locking and re-opened, never trusted.
//
// Timed waits use a blocking flock(2) that a one-shot CLOCK_MONOTONIC timer
// interrupts at the deadline with a real-time signal aimed at the waiting
// thread (the highest SIGRTMIN..SIGRTMAX whose disposition is default, with a
// handler that does nothing, installed on first use). The kernel wakes the
// waiter as soon as the holder releases; nothing polls.
//
// Caveats of flock(2) itself, which this store inherits:
//   * Promotion (shared to exclusive) is not atomic in Linux: the kernel drops
//     the shared lock before it queues for the exclusive one. If promotion
//     fails the store takes the shared lock back when it can; if a writer got
//     in between, Save returns false and the key holds nothing.
//   * flock over NFS is emulated with byte-range locks on some kernels and
//     not at all on others; keep lock dirs on local filesystems.
//   * Locks belong to the open file, so they survive fork() in the child
//     too; ipclock opens with O_CLOEXEC so exec'd programs do not inherit
//     them.

#ifndef IPCLOCK_FLOCK_STORE_H_
#define IPCLOCK_FLOCK_STORE_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/remove_ipc.h"
#include "ipclock/store.h"

namespace ipclock {

struct FlockStoreOptions {
  enum class Naming {
    kSymfony,  // sf.<sanitized>.<hash>.lock in `dir`
    kPath,     // the resource is the path of the file to lock
  };

  // Lock dir; empty for the default dir.
  std::string dir;
  Naming naming = Naming::kSymfony;
  // Mode of a lock dir this store creates.
  mode_t dir_mode = 0700;
  // Mode of the lock files it creates. Use 0666 (and a shared dir) where
  // processes of other users must lock the same files.
  mode_t file_mode = 0600;
  // Write the holder record (fencing and owner death). Symfony naming only.
  bool holder_record = true;
  // What to do where systemd-logind may delete this store's locks at logout
  // (remove_ipc.h).
  RemoveIpcPolicy remove_ipc = RemoveIpcPolicy::kWarn;
};

absl::StatusOr<std::shared_ptr<Store>> NewFlockStore(
    const FlockStoreOptions& options = FlockStoreOptions());

// Symfony FlockStore's file name for `resource` (no dir).
std::string FlockFileName(absl::string_view resource);

// The default lock dir for this process (see above); not created.
std::string DefaultFlockDir();

}  // namespace ipclock

#endif  // IPCLOCK_FLOCK_STORE_H_
