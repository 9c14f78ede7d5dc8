// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/semaphore_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
//
// Locks on System V semaphore sets (DSN `semaphore`), in the protocol of
// PHP's sem_get()/sem_acquire() as Symfony's SemaphoreStore uses them, so a
// PHP application and ipclock exclude each other on the same resource.
//
// IPC key. The first 4 bytes of a digest of the resource, read as a
// little-endian signed 32-bit number: MD5 (Symfony 4.4.27 to 6.2, the
// default) or XXH3-128 with seed 0 in canonical byte order (Symfony 6.3 and
// later; needs libxxhash at build time, else Unimplemented). Pick the scheme
// of the Symfony version you share locks with.
//
// Sets. Semaphore #0 is the lock, #1 counts attached processes, #2 guards
// initialization, as PHP lays them out. Sets ipclock creates carry two more
// that PHP never touches: #3 records the number of permits the first
// attacher chose, and #4 counts acquisitions not yet released, which is how
// a holder that died is told from one that released. PHP attaches to such a
// set unchanged; a set that PHP created first has only its three and is
// shared as a mutex. A set under the key with any other number of
// semaphores belongs to another program and is refused.
//
// Every operation uses SEM_UNDO, so the kernel gives a permit back when its
// holder dies, SIGKILL included.
//
// Attachments and what stays in `ipcs -s`. A Lock attaches to its
// resource's set (PHP's sem_get protocol) at its first acquisition and stays
// attached, held or not, until it is destroyed, so a reused Lock acquires
// and releases with one semop each. A destroyed Lock's attachment is not
// ended but kept by the store, idle, for the next Lock on that resource
// (`keep_idle`, 16 by default; idle ones go after 10 s at the store's next
// use, the least recently used first when there are more), so that a full
// cycle (create a Lock, acquire, release, destroy it) on a resource used a
// moment ago is two semops as well, with no semget() or IPC_RMID. An
// attachment is ended when the store evicts it or is destroyed; the last
// process to end its attachment removes the set (IPC_RMID). So nothing is
// left in `ipcs -s` once no store that used the resource lives, but a set
// stays while one does, held or not. A set whose holder died also stays
// until its next holder comes, however many users leave meanwhile: #4 is
// where that holder learns of the death, and a new set would know of none.
//
// That departs, knowingly, from Symfony's SemaphoreStore, whose release
// removes the set at once (its test suite counts sets after a release).
// Kept idle, a set costs the kernel a few hundred bytes and does nothing
// else: PHP peers attach to it and still exclude ipclock both ways, and
// Symfony's release still removes it (ipclock then attaches to the set the
// key leads to next, as Symfony's own waiters do). Attaching and removing
// at every full cycle takes 16 system calls where Symfony's cycle takes 8
// and a cycle on a kept set 2. `keep_idle=0` restores removal with the last
// Lock object; sets are never removed while a Lock object that used them
// lives.
//
// A process that ends without destroying its store (_exit, a signal, or
// exit() while a local variable holds the store) is uncounted by the
// kernel (SEM_UNDO) but removes nothing: its sets, up to `keep_idle` idle
// ones per store plus those of its Lock objects, stay until the next
// process to use each resource ends its attachment. A fork()ed child
// keeps nothing idle in the store it inherited (it seldom destroys it);
// it detaches as keep_idle=0 would.
//
// Owner death. Among ipclock processes it is exact (semaphore #4). A holder
// that is not ipclock (PHP) leaves no mark; what the kernel records is the
// last process to operate on the lock (GETPID), and ipclock operates on #0
// and #4 together, so a last operation on #0 that #4 does not share is a
// foreign process's. When that process is gone once we hold the permit, we
// report its death: it was read before our wait (a waiter woken by a PHP
// holder's death is told, the kernel's undo at exit counting as the death
// even before the process is a zombie), at attachment (a process that
// comes after the death is told), and for sets PHP made, before every
// acquisition. That is a guess where PHP released without removing the set
// (Symfony always removes it) and then exited, and it misses a PHP holder
// that died while this process was attached to the set but neither waiting
// nor acquiring.
//
// A lost lock. The set we hold can be removed (`ipcrm -s ID`, systemd's
// RemoveIPC at logout, a peer that ignores the protocol) or reset (SETVAL
// by another process). `Lock::CheckAcquired()` asks the kernel (IPC_STAT:
// the id still names a set of our key; GETALL: our permit is still taken)
// and returns Aborted ("semaphore set ID (key K) was removed"). SysV IPC
// gives no notification of removal, so a `LockWatch` sees it at its next
// interval check, not at once. A release on a removed set returns Aborted
// (there was nothing left to give back).
//
// Fairness. A waiter's semop sleeps in the set's queue, and a release that
// makes the first queued operation possible performs it at once, for that
// waiter, before anyone else runs: the permit goes to the longest waiting
// process, and a releaser that acquires again finds it taken and queues.
// So waiters are served in the order they began to wait and none starves,
// with no option needed (`fair=true` is accepted, and so is `fair=false`,
// which changes nothing). PHP's sem_acquire() waits in the same queue (the
// kernel moves single-semaphore waits into the set's one queue while any
// operation on several semaphores, such as ipclock's, waits). Killed
// waiters leave the queue at once; a killed holder's permit goes, by its
// SEM_UNDO, to the first waiter, which is told. No priority inheritance: a
// semaphore has no owner whose priority the kernel could raise.
//
// Capabilities: blocking, counting (permits > 1, not with sets PHP made),
// owner death, fair, local. Locks are tied to the process (SEM_UNDO is per
// process): keys cannot be serialized, and there are no shared locks,
// leases or fencing tokens. A fork()ed child cannot release or check its
// parent's lock (FailedPrecondition).
//
// Caveats:
//   * SysV IPC objects are per IPC namespace: containers with their own
//     namespace do not share locks with the host.
//   * systemd-logind removes a user's SysV objects at logout when
//     RemoveIPC=yes (the default for non-system users): see doc/stores.md.
//   * A resource whose digest starts with four zero bytes would map to
//     IPC_PRIVATE (key 0), which the kernel never shares; such names are
//     refused (1 in 2^32; PHP has the same hole without noticing).

#ifndef IPCLOCK_SEMAPHORE_STORE_H_
#define IPCLOCK_SEMAPHORE_STORE_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/remove_ipc.h"
#include "ipclock/store.h"

namespace ipclock {

enum class SemaphoreKeyScheme {
  kMd5,   // Symfony 4.4.27 to 6.2
  kXxh3,  // Symfony 6.3 and later
};

struct SemaphoreStoreOptions {
  SemaphoreKeyScheme key_scheme = SemaphoreKeyScheme::kMd5;
  // Permissions of the sets this store creates (umask does not apply to SysV
  // IPC). PHP creates with 0666; use that where a PHP process running as
  // another user must share the lock.
  mode_t mode = 0600;
  // What to do where systemd-logind may delete this store's locks at logout
  // (remove_ipc.h).
  RemoveIpcPolicy remove_ipc = RemoveIpcPolicy::kWarn;
  // Attachments kept idle for the next Lock on the same resource (see the
  // top of the file), 0 to kMaxKeepIdle. DSN option `keep_idle`.
  size_t keep_idle = 16;
  static constexpr size_t kMaxKeepIdle = 4096;
};

absl::StatusOr<std::shared_ptr<Store>> NewSemaphoreStore(
    const SemaphoreStoreOptions& options = SemaphoreStoreOptions());

// The IPC key Symfony's SemaphoreStore uses for `resource`. Unimplemented for
// kXxh3 in a build without libxxhash.
absl::StatusOr<int32_t> SemaphoreIpcKey(absl::string_view resource,
                                        SemaphoreKeyScheme scheme);

}  // namespace ipclock

#endif  // IPCLOCK_SEMAPHORE_STORE_H_
