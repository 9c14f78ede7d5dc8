// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: posix_semaphore_store.h
// -----------------------------------------------------------------------------
//
// Locks on a shared-memory registry of holders with a POSIX named semaphore
// beside it (DSN `posix-semaphore`): the registry counts the permits, so
// that a holder's death does not lose its permit, and waiters sleep on the
// semaphore.
//
// Names. A resource maps to the semaphore "/<prefix>.<hex>" (prefix
// "ipclock" by default; hex is the first 16 bytes of SHA-256 of the
// resource, lowercase) and to the shared-memory registry
// "/<prefix>.<hex>.reg". On Linux both live in /dev/shm (the semaphore as
// "sem.<prefix>.<hex>"). The semaphore's value follows the free permits,
// as a hint (`ipclock list` shows it): a program that sem_posts it only
// wakes ipclock waiters early, and one that sem_waits on it takes no
// permit, since the registry alone says who holds one.
//
// Acquisition and release. A key holds a permit exactly while its registry
// slot is marked holding; the free permits are the permits minus the
// marked slots. Taking one is marking our slot, giving it back is clearing
// it, each under the registry's robust mutex, so a process killed at any
// instant leaves the registry consistent: after EOWNERDEAD nothing needs
// repair, since the count is taken from the slots afresh each time.
//
// Waits. sem_clockwait() on CLOCK_MONOTONIC: a release clears its slot,
// then sem_posts, which wakes a waiter at once; the waiter then looks at
// the registry. A POSIX semaphore has no undo on death, so a waiter also
// wakes every 200 ms at most to look over the registry (below); that is the
// only polling, and it happens only while a wait lasts.
//
// Owner death. The registry holds one slot per attached key: pid, process
// start time (from /proc, to tell a reused pid), and whether it holds a
// permit. A waiter, or a try that finds no permit, reclaims the slots of
// processes that are gone (no such pid, a zombie, or another start time):
// clearing a slot that held a permit frees it (and a sem_post wakes a
// waiter for it), and the next holder is told that the previous owner died. So a dead holder's permit returns
// within 200 ms of its death while someone waits, and at the next attempt
// otherwise. A live process is never reclaimed, whatever it is doing.
//
// Limits of that recovery:
//   * A process killed between clearing its slot and its sem_post, or a
//     waiter killed just after sem_clockwait woke it, takes a wake-up with
//     it, never a permit: a waiter then finds the free permit at the end of
//     its current 200 ms slice instead of at once.
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
#include "ipclock/remove_ipc.h"
#include "ipclock/store.h"

namespace ipclock {

struct PosixSemaphoreStoreOptions {
  // Permissions of the semaphores and registries this store creates. Use
  // 0666 where processes of other users must share the locks.
  mode_t mode = 0600;
  // First part of every name: letters, digits, '.', '_' and '-', at most 64
  // bytes. Lets separate applications keep apart.
  std::string prefix = "ipclock";
  // What to do where systemd-logind may delete this store's locks at logout
  // (remove_ipc.h).
  RemoveIpcPolicy remove_ipc = RemoveIpcPolicy::kWarn;
};

absl::StatusOr<std::shared_ptr<Store>> NewPosixSemaphoreStore(
    const PosixSemaphoreStoreOptions& options = PosixSemaphoreStoreOptions());

// The semaphore name for `resource`: "/<prefix>.<32 hex digits>". The
// registry's name is this plus ".reg".
std::string PosixSemaphoreName(absl::string_view resource,
                               absl::string_view prefix = "ipclock");

}  // namespace ipclock

#endif  // IPCLOCK_POSIX_SEMAPHORE_STORE_H_
