// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/posix_semaphore_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
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
// Acquisition and release. The registry alone says who holds a permit, in
// words a process killed at any instant leaves consistent, so a holder's
// death never loses a permit (after EOWNERDEAD nothing needs guessing). For
// a mutex (permits=1) the permit is one word in the registry, taken and
// given back with one compare-and-swap each: a reused Lock acquires and
// releases without a system call or a mutex while the lock is free. With
// permits > 1, a slot marked holding under the registry's robust mutex.
//
// Waits. sem_clockwait() on CLOCK_MONOTONIC: a release gives its permit
// back, then sem_posts, which wakes a waiter at once; the waiter then looks
// at the registry. A POSIX semaphore has no undo on death, so a waiter also
// wakes every 200 ms at most to look over the registry (below); that is the
// only polling, and it happens only while a wait lasts.
//
// Fairness. Without `fair`, a release posts the semaphore and the waiter it
// wakes must then take the permit, which the releaser, if it acquires again
// at once, usually takes first: a process looping on one resource can keep
// the others out (doc/performance.md measures it). With `fair=true` the
// registry holds a queue of tickets (src/stores/ticket_queue/ticket_queue.h): a process
// that must wait takes a ticket and sleeps until it is first; only the first
// waiter sleeps on the semaphore, and nobody, a try included, takes a
// permit while someone queues, so the releaser queues behind its waiters.
// Waiters are served in the order they began to wait, with counting
// permits too. The free path reads two words more and writes nothing. A
// waiter killed in the queue is passed over once it has been first for
// about 100 ms, one whose timeout ran out at once; the permit of a holder
// killed while others queue goes to the first waiter (within the 200 ms
// slice below), which is told of the death. No priority inheritance: a
// semaphore has no owner whose priority the kernel could raise.
//
// Owner death. The registry holds one slot per attachment: pid, process
// start time (from /proc, to tell a reused pid), and whether it holds a
// permit. A waiter, or a try that finds no permit, reclaims the permits of
// processes that are gone (no such pid, a zombie, every thread exiting, or
// another start time): the permit is freed (and a sem_post wakes a waiter
// for it), and the next holder is told that the previous owner died. So a
// dead holder's permit returns within 200 ms of its death while someone
// waits, and at the next attempt otherwise. A live process is never
// reclaimed, whatever it is doing.
//
// Limits of that recovery:
//   * A process killed between giving its permit back and its sem_post, or
//     a waiter killed just after sem_clockwait woke it, takes a wake-up
//     with it, never a permit: a waiter then finds the free permit at the
//     end of its current 200 ms slice instead of at once.
//   * Pids only mean something within one pid namespace; the registry
//     records its creator's namespace and refuses processes from another.
//   * Up to 256 attachments to one resource at once.
//
// Attachments and what stays in /dev/shm. A Lock attaches (a registry slot,
// the two objects mapped, one descriptor) at its first acquisition and
// stays attached, held or not, until it is destroyed. A destroyed Lock's
// attachment is then kept by the store, idle, for the next Lock on that
// resource (`keep_idle`, 16 by default; idle ones go after 10 s at the
// store's next use, the least recently used first when there are more), so
// that a full cycle on a resource used a moment ago opens, maps and
// removes nothing. The last attachment to end removes both objects, so
// nothing is left in /dev/shm once no store that used the resource lives;
// `keep_idle=0` removes them with the last Lock object. A process that ends
// with attachments (_exit, a signal, or exit() while a local variable
// holds the store) leaves its slots, up to `keep_idle` idle ones per store
// plus those of its Lock objects: the next process to attach or detach
// reclaims them, and the last one then removes the pair; a resource nobody
// uses again keeps its pair in /dev/shm. So does one whose holder died and
// whose next holder has not come yet: the death is recorded in the
// registry, and the last user to leave keeps the pair so that the next
// holder is told (a new pair would know of no death). A fork()ed child keeps nothing
// idle in the store it inherited (it seldom destroys it); it detaches as
// keep_idle=0 would.
//
// Creation is atomic: a registry and its semaphore are made under no name
// and linked into place complete, so a creator that fails (EMFILE, ENOSPC)
// or dies at any step leaves nothing that blocks or misleads the next one.
//
// A lost lock. The registry or the semaphore can be deleted from /dev/shm
// (a cleaner, systemd's RemoveIPC at logout) or rewritten by a process with
// write access. `Lock::CheckAcquired()` checks exactly, with an fstat and
// two lstats: the registry and the semaphore are still linked and still the
// files at their names, and our slot still names us as the holder; if not,
// Aborted saying what was lost. A `LockWatch` learns of the registry's
// deletion at once (inotify on its descriptor), of the rest at its interval
// check. The acquisition and release paths check less, to stay free of
// system calls: a permit taken after a wait, or more than 10 ms after the
// attachment's last check, is checked (one fstat: is the registry still
// linked? if not, it is given up and the names are attached afresh), and so
// is a release more than 10 ms after the last check (Aborted if the
// registry was deleted meanwhile). So a deletion goes unseen by the lock's
// own calls for at most 10 ms of them (a tight loop of acquisitions and
// releases checks once per 10 ms); a program that holds locks for long and
// must stop as soon as one is lost uses a LockWatch.
//
// Capabilities: blocking, counting, owner death, local; fair with `fair`.
// Keys cannot be serialized; no shared locks, leases or fencing tokens. A
// fork()ed child cannot release or check its parent's lock
// (FailedPrecondition).
//
// Format. The registry's layout changed with this version (magic number
// "ipc4": its slots say since when they hold or wait, for `ipclock list`):
// registries of earlier ipclock builds are refused
// with FailedPrecondition rather than shared.
//
// Caveat: systemd-logind empties /dev/shm of a user's objects at logout
// when RemoveIPC=yes (the default for non-system users): see doc/stores.md.

#ifndef IPCLOCK_POSIX_SEMAPHORE_STORE_H_
#define IPCLOCK_POSIX_SEMAPHORE_STORE_H_

#include <sys/types.h>

#include <cstddef>
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
  // Attachments kept idle for the next Lock on the same resource (see the
  // top of the file), 0 to kMaxKeepIdle. DSN option `keep_idle`.
  size_t keep_idle = 16;
  static constexpr size_t kMaxKeepIdle = 4096;
  // Waiters served in order, none starved (see "Fairness" above). Fixed per
  // resource by the process that creates its pair: every user must agree
  // (InvalidArgument otherwise). DSN option `fair`.
  bool fair = false;
};

absl::StatusOr<std::shared_ptr<Store>> NewPosixSemaphoreStore(
    const PosixSemaphoreStoreOptions& options = PosixSemaphoreStoreOptions());

// The semaphore name for `resource`: "/<prefix>.<32 hex digits>". The
// registry's name is this plus ".reg".
std::string PosixSemaphoreName(absl::string_view resource,
                               absl::string_view prefix = "ipclock");

}  // namespace ipclock

#endif  // IPCLOCK_POSIX_SEMAPHORE_STORE_H_
