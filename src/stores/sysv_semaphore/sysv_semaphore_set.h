// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// One SysV semaphore set in PHP's sem_get() layout, as the semaphore store
// uses it: attaching and detaching by PHP's protocol, taking and giving back
// a permit, telling a dead holder from one that released, and checking that
// a held set is still the one we hold. See include/ipclock/stores/semaphore_store.h
// for the contract; the caveats of SysV semaphores are written beside the
// code that deals with them.

#ifndef IPCLOCK_STORES_SYSV_SEMAPHORE_SET_H_
#define IPCLOCK_STORES_SYSV_SEMAPHORE_SET_H_

#include <sys/types.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/spi/deadline.h"

namespace ipclock {

// The semaphores of a set. #0..#2 are PHP's (ext/sysvsem), #3 and #4 are
// ipclock's and exist only in sets ipclock created.
inline constexpr unsigned short kSysvLockSem = 0;     // the permits
inline constexpr unsigned short kSysvUsageSem = 1;    // processes attached
inline constexpr unsigned short kSysvInitSem = 2;     // held during attach and detach
inline constexpr unsigned short kSysvPermitsSem = 3;  // permits chosen by the first user
inline constexpr unsigned short kSysvHeldSem = 4;     // acquisitions not yet released
inline constexpr int kSysvPhpSems = 3;
inline constexpr int kSysvOwnSems = 5;

// A semaphore holds at most SEMVMX (32767).
inline constexpr uint32_t kSysvMaxPermits = 32767;

// Who is asking, for messages.
struct SysvContext {
  absl::string_view describe;  // the store's Describe()
  absl::string_view resource;
};

// This process's attachment to the set of one resource: counted once in the
// set's #1 (with SEM_UNDO, so the kernel uncounts it when the process dies).
// While it lasts, no ipclock process removes the set. Used by one Lock at a
// time; plain data, ended only by DetachSet().
struct SysvAttachment {
  int32_t ipc_key = 0;
  int semid = -1;
  int nsems = 0;
  // The permits this attachment verified against the set (CheckPermits).
  uint32_t permits = 0;
  // The permits the current (or last) acquisition took: its weight
  // (Key::weight()), taken and given back in one semop.
  uint32_t weight = 1;
  // The process that attached: after fork() the child has none of the undo
  // records behind our count in #1, so the attachment is not its to use or
  // to end.
  pid_t attach_pid = 0;
  // A process that was the last to operate on the lock semaphore and is not
  // known to be an ipclock holder (a PHP holder), read when attaching or
  // before a wait: if it is gone once we hold the permit, it died holding
  // it (see CheckOwnerDeath in the .cc). 0 if none.
  pid_t foreign_last_user = 0;
  // CoarseMonotonicNanos() when `semid` was last shown to be this key's set
  // (attachment, IPC_STAT, a successful semop).
  int64_t proven_at = 0;

  bool attached() const { return semid >= 0; }
  bool own_layout() const { return nsems >= kSysvOwnSems; }
};

// Opens (creating if need be, with `mode`) the set of `ipc_key` and attaches
// to it by PHP's protocol, initializing the permits if we are its first
// user. InvalidArgument when the set's permits differ from `permits`, or
// when PHP made it and `permits` is not 1; FailedPrecondition for a set of
// another layout under the key.
absl::Status AttachSet(const SysvContext& ctx, int32_t ipc_key, mode_t mode,
                       uint32_t permits, SysvAttachment* att);

// Ends the attachment and removes the set if we were its last user. Never
// called for an attachment that holds a permit. Errors go unreported:
// there is nobody to tell, and a set left behind by a failure here is what
// PHP leaves in every case.
void DetachSet(SysvAttachment* att);

// For a permit that CheckSetHeld() found lost: ends the attachment without
// giving the permit back (a set reset under us would get one permit too
// many). Nothing to do for a set that was removed.
void AbandonLostPermit(SysvAttachment* att);

enum class SysvStep { kDone, kBusy, kGone };

// Takes a permit by `deadline`. kGone: the set was removed (Symfony's
// release does that) and the attachment went with it; attach again.
// `*previous_owner_died` is set on kDone. `tried_just_now`
// (Key::tried_just_now()): a try found the permit taken a moment ago, so a
// wait begins by sleeping, with no try of its own.
absl::StatusOr<SysvStep> AcquirePermit(const SysvContext& ctx, SysvAttachment* att,
                                       Deadline deadline, bool tried_just_now,
                                       bool* previous_owner_died);

// Gives the permit back. Aborted when the set was removed while held (the
// permit went with it, and so did the attachment). `died` leaves our mark
// in #4, so that the next holder is told of a death (ReleaseAsDead()).
absl::Status ReleasePermit(const SysvContext& ctx, SysvAttachment* att, bool died = false);

// For a held permit: OK while `att`'s set is still the set of its key and
// still counts us; Aborted if it was removed (`ipcrm -s`, RemoveIPC) or
// reset under us.
absl::Status CheckSetHeld(const SysvContext& ctx, const SysvAttachment& att);

// True when `att`'s id still names a set of its key and layout (IPC_STAT).
// A removed set's id comes back for another set only after the kernel's
// counters wrap (millions of sets later); the store asks this before using
// an id left unused for a while, so that it never operates on a stranger's
// set.
bool SetStillOurs(const SysvAttachment& att);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SYSV_SEMAPHORE_SET_H_
