// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: semaphore_store.h
// -----------------------------------------------------------------------------
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
// shared as a mutex.
//
// Every operation uses SEM_UNDO, so the kernel gives a permit back when its
// holder dies, SIGKILL included. A key attaches to the set at its first
// acquisition and stays attached, held or not, until it is destroyed (as a
// flock Lock keeps its file open), so a reused Lock acquires and releases
// with one semop each. A set is removed (IPC_RMID) by the last key to
// detach, so nothing is left in `ipcs -s` once no Lock object for the
// resource exists; a released but living Lock keeps the set. A process that
// ends with a Lock object still alive (exit without destructors, _exit, a
// signal) is uncounted by the kernel (SEM_UNDO) but removes nothing: the set
// stays until the next process to use the resource detaches from it.
// Symfony removes the set on every release; a waiter here then attaches to
// a new set and goes on waiting, as Symfony's own waiters do.
//
// Owner death. Among ipclock processes it is exact (semaphore #4). For a set
// PHP created, the only evidence is the pid the kernel records as the last
// process to operate on the lock (sempid): when that process no longer
// exists once we hold the lock, we report its death. That is a guess: a PHP
// process that released (without removing the set) and exited since reads
// the same, and a death followed by another process's use of the lock
// before ours goes unseen.
//
// Capabilities: blocking, counting (permits > 1, not with sets PHP made),
// owner death, local. Locks are tied to the process (SEM_UNDO is per
// process): keys cannot be serialized, and there are no shared locks,
// leases or fencing tokens.
//
// Caveats:
//   * SysV IPC objects are per IPC namespace: containers with their own
//     namespace do not share locks with the host.
//   * systemd-logind removes a user's SysV objects at logout when
//     RemoveIPC=yes (the default for non-system users): see README.md.
//   * A resource whose digest starts with four zero bytes would map to
//     IPC_PRIVATE (key 0), which the kernel never shares; such names are
//     refused (1 in 2^32; PHP has the same hole without noticing).

#ifndef IPCLOCK_SEMAPHORE_STORE_H_
#define IPCLOCK_SEMAPHORE_STORE_H_

#include <sys/types.h>

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
};

absl::StatusOr<std::shared_ptr<Store>> NewSemaphoreStore(
    const SemaphoreStoreOptions& options = SemaphoreStoreOptions());

// The IPC key Symfony's SemaphoreStore uses for `resource`. Unimplemented for
// kXxh3 in a build without libxxhash.
absl::StatusOr<int32_t> SemaphoreIpcKey(absl::string_view resource,
                                        SemaphoreKeyScheme scheme);

}  // namespace ipclock

#endif  // IPCLOCK_SEMAPHORE_STORE_H_
