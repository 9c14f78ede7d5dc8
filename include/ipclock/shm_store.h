// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: shm_store.h
// -----------------------------------------------------------------------------
//
// The fast store: a table of robust, process-shared pthread mutexes in one
// POSIX shared memory segment (DSN `shm://NAME`, segment `/dev/shm/ipclock.NAME`).
// An uncontended acquire and release of a Lock that is reused costs about as
// much as locking and unlocking a robust mutex by hand; a waiter sleeps in the
// kernel (futex) and wakes when the holder releases. It excludes processes on
// this host that open the same NAME.
//
//   shm://myapp                 segment /dev/shm/ipclock.myapp, 1024 slots
//   shm://myapp?capacity=4096   more slots (used only when creating it)
//   shm://myapp?mode=0660       let the group use it too (created 0600)
//   shm://myapp?pi=true         priority-inheritance mutexes
//
// NAME is 1 to 200 bytes of [A-Za-z0-9._-].
//
// Capabilities: blocking, fencing, owner_death, local. No shared (read)
// locks, no leases, no counting; keys cannot be serialized, since a pthread
// mutex belongs to the thread that locked it.
//
// THE OWNER THREAD RULE. A lock of this store is owned by the thread that
// acquired it and must be released by that same thread. Releasing (or
// destroying a held Lock) on another thread returns FailedPrecondition and
// leaves the lock held; it comes back, reported to the next holder as an
// owner death, when the owning thread exits. A second Lock on a resource
// that this thread already holds never deadlocks: a try returns false, a wait
// with a timeout waits it out and returns DeadlineExceeded (the holder cannot
// release while its thread waits), and a wait without a timeout returns
// FailedPrecondition ("self-deadlock") at once. After fork() the child holds
// none of its parent's locks and cannot release them.
//
// Owner death. The mutexes are robust: when a holder dies (kill -9, a crash,
// a thread exit without release) the next holder gets the lock and
// `previous_owner_died()` is true; whatever the lock protected may be half
// updated. A holder that dies while releasing (after its release started) is
// not reported.
//
// Fencing. Each acquisition gets a fencing token that grows for the resource
// for as long as the segment exists, including across slot reuse.
//
// Slots. A resource occupies one slot while some Lock uses it; names of up to
// 200 bytes are stored in full, longer ones as their SHA-256 and length, so
// two distinct long names share a slot only on a SHA-256 collision. Distinct
// names never share a slot because of a hash collision of the table. Slots
// that no Lock holds are reused for new names; when every slot is held (or
// kept for a holder that died, until the next holder of that resource has
// been told), acquisition fails with ResourceExhausted: create the segment
// with a larger `capacity`.
//
// The segment's settings (capacity, mode, pi) are fixed by whoever creates
// it; later stores use its capacity and refuse it with FailedPrecondition if
// its layout (version, word size, slot size) or its `pi` setting differs from
// theirs.
//
// REMOVING A SEGMENT. Stop every process that uses it, then
// `rm /dev/shm/ipclock.NAME` (or `RemoveShmSegment()`). A segment removed
// while processes use it leaves them on the old copy while new processes
// make a new one: two holders for one name. systemd-logind does exactly that
// at a user's logout when RemoveIPC=yes (its default) for users that are not
// system users; run such services as system users or set RemoveIPC=no. The
// store detects a removed segment and refuses new locks with
// FailedPrecondition; see "Detection" below for exactly when.
//
// Detection of a removed segment. The store keeps the segment open and
// checks its link count (fstat(2) of that descriptor) when the store is
// created, and when a Lock acquires for the first time (its Key has no slot
// yet) provided no such check ran in the last millisecond; the clock for
// this is CLOCK_MONOTONIC_COARSE, so in practice the check runs at most once
// per kernel tick (1 to 10 ms, CONFIG_HZ). A system call costs more than the
// rest of a create-acquire-release-destroy cycle, hence the limit. A Lock
// that has acquired before keeps its slot and re-acquires without any check:
// it is refused only once some first acquisition through the same store
// object has noticed the removal, which marks the store removed for every
// Lock. What is not detected: acquisitions by reused Locks before that, and
// first acquisitions within one tick of the last check. No check can close
// the window between itself and the acquisition; the cure is to keep the
// segment from being removed (above).
//
// Priority inheritance (`pi=true`). Timed waits on PI mutexes use
// CLOCK_MONOTONIC where glibc (2.35+) and the kernel (5.14+, FUTEX_LOCK_PI2)
// accept it. Older pairs refuse it, and there a timed wait on a `pi=true`
// store sleeps until a CLOCK_REALTIME time computed from the remaining
// timeout: a step of the wall clock during the wait shortens or stretches
// it. Waits without a timeout and tries are unaffected.
//
// Async waits (ipclock/async.h) sleep on the futex word of the slot's
// robust mutex, through io_uring where the kernel allows, and try the lock
// on the event loop's thread, which then owns it. Not on `pi=true` segments
// (FailedPrecondition): the kernel hands a PI mutex only to its own waiters.
//
// Security. /dev/shm is shared by all users. With mode 0600 only the
// creator's user can use the segment; any user who can open a segment can
// also hold its locks forever or corrupt it. A segment that another user
// created before you is used if its mode lets you open it.

#ifndef IPCLOCK_SHM_STORE_H_
#define IPCLOCK_SHM_STORE_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/remove_ipc.h"
#include "ipclock/store.h"

namespace ipclock {

struct ShmStoreOptions {
  // The segment is /dev/shm/ipclock.<name>; [A-Za-z0-9._-]{1,200}.
  std::string name;
  // Mode of a segment this store creates, set exactly (not cut by the umask).
  mode_t mode = 0600;
  // Slots of a segment this store creates (1 to 65536): the most resources
  // held at once. Each slot takes 320 bytes on x86-64.
  uint32_t capacity = 1024;
  // Priority-inheritance mutexes (PTHREAD_PRIO_INHERIT), for real-time
  // threads that must not be held up by a lower-priority holder.
  bool priority_inheritance = false;
  // What to do where systemd-logind may delete this store's locks at logout
  // (remove_ipc.h).
  RemoveIpcPolicy remove_ipc = RemoveIpcPolicy::kWarn;
};

// Opens or creates the segment. InvalidArgument for a bad name or option;
// FailedPrecondition for a segment of another layout or `pi` setting, or one
// whose creator died before initializing it; the OS error otherwise (e.g.
// PermissionDenied for another user's segment).
absl::StatusOr<std::shared_ptr<Store>> NewShmStore(const ShmStoreOptions& options);

// Unlinks /dev/shm/ipclock.<name>. Only safe once no process uses the
// segment (see above). NotFound if there is none.
absl::Status RemoveShmSegment(absl::string_view name);

// One bound slot of a segment, as ListShmSlots() saw it.
struct ShmSlotInfo {
  uint32_t index = 0;
  // The resource; "sha256:<64 hex digits>" for a name over 200 bytes, which
  // the segment keeps only as its digest.
  std::string name;
  // The process holding the lock, 0 if none. A non-zero pid of a process
  // that is gone is a holder that died holding it: the lock is free, and its
  // next holder will be told.
  pid_t holder_pid = 0;
  bool holder_alive = false;
  // The fencing token of the latest acquisition.
  uint64_t fence = 0;
  // Keys (in any process) that have this slot cached; a hint.
  uint32_t refs = 0;
};

// The slots of /dev/shm/ipclock.<name> that are bound to a resource, for
// `ipclock list`. Read-only: the segment is mapped PROT_READ and no mutex is
// taken, so the listing is a snapshot that may be torn for a slot that is
// being rebound or acquired at that instant (such a slot is retried a few
// times, then shown as read). Never creates the segment: NotFound if there
// is none; FailedPrecondition for one of another layout.
absl::StatusOr<std::vector<ShmSlotInfo>> ListShmSlots(absl::string_view name);

}  // namespace ipclock

#endif  // IPCLOCK_SHM_STORE_H_
