// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: posix_semaphore_store.h
// -----------------------------------------------------------------------------
//
// Locks on POSIX named semaphores (DSN `posix-semaphore`), with a registry
// of holders beside each one so that a holder's death does not lose its
// permit for good.
//
// Names. A resource maps to the semaphore "/<prefix>.<hex>" (prefix
// "ipclock" by default; hex is the first 16 bytes of SHA-256 of the
// resource, lowercase) and to the shared-memory registry
// "/<prefix>.<hex>.reg". On Linux both live in /dev/shm (the semaphore as
// "sem.<prefix>.<hex>"). Other programs may sem_wait/sem_post the same
// semaphore and take part in the lock, without the death recovery below.
//
// Waits. sem_clockwait() on CLOCK_MONOTONIC: a release (sem_post) wakes a
// waiter at once. A POSIX semaphore has no undo on death, so a waiter also
// wakes every 200 ms at most to look over the registry (below); that is the
// only polling, and it happens only while a wait lasts.
//
// Owner death. The registry holds one slot per attached key: pid, process
// start time (from /proc, to tell a reused pid), and whether it holds a
// permit. A waiter, or a try that finds no permit, reclaims the slots of
// processes that are gone (no such pid, a zombie, or another start time):
// a slot that held a permit gets it posted back, and the next holder is
// told that the previous owner died. So a dead holder's permit returns
// within 200 ms of its death while someone waits, and at the next attempt
// otherwise. A live process is never reclaimed, whatever it is doing.
//
// Limits of that recovery:
//   * A process killed in the instant between sem_clockwait() handing it a
//     permit and its slot being marked (or between its slot being cleared
//     and its sem_post) loses that permit: ipclock never guesses, since a
//     wrong guess would make a second holder. Remove both files once nobody
//     uses the resource to reset it.
//   * Pids only mean something within one pid namespace; the registry
//     records its creator's namespace and refuses processes from another.
//   * Up to 256 keys may be attached to one resource at once.
//
// A key attaches at its first acquisition and stays attached, held or not,
// until it is destroyed (as a flock Lock keeps its file open), so a reused
// Lock acquires and releases without opening anything. The last key to
// detach removes both objects, so nothing is left in /dev/shm once no Lock
// object for the resource exists; a released but living Lock keeps them. A
// process that ends with a Lock object still alive (_exit, a signal) leaves
// its slot; the next key to attach or detach reclaims it, and the last one
// then removes the pair. Capabilities: blocking, counting, owner death, local.
// Keys cannot be serialized; no shared locks, leases or fencing tokens.
//
// Caveat: systemd-logind empties /dev/shm of a user's objects at logout
// when RemoveIPC=yes (the default for non-system users): see README.md.

#ifndef IPCLOCK_POSIX_SEMAPHORE_STORE_H_
#define IPCLOCK_POSIX_SEMAPHORE_STORE_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/store.h"

namespace ipclock {

struct PosixSemaphoreStoreOptions {
  // Permissions of the semaphores and registries this store creates. Use
  // 0666 where processes of other users must share the locks.
  mode_t mode = 0600;
  // First part of every name: letters, digits, '.', '_' and '-', at most 64
  // bytes. Lets separate applications keep apart.
  std::string prefix = "ipclock";
};

absl::StatusOr<std::shared_ptr<Store>> NewPosixSemaphoreStore(
    const PosixSemaphoreStoreOptions& options = PosixSemaphoreStoreOptions());

// The semaphore name for `resource`: "/<prefix>.<32 hex digits>". The
// registry's name is this plus ".reg".
std::string PosixSemaphoreName(absl::string_view resource,
                               absl::string_view prefix = "ipclock");

}  // namespace ipclock

#endif  // IPCLOCK_POSIX_SEMAPHORE_STORE_H_
