// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/shm_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
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
//   shm://myapp?pi=true         priority-inheritance mutexes (fair too)
//   shm://myapp?fair=true       waiters served in order (the same mutexes)
//
// NAME is 1 to 200 bytes of [A-Za-z0-9._-].
//
// Capabilities: blocking, fencing, owner_death, local; fair and
// priority_inheritance on segments of priority-inheritance mutexes (`pi` or
// `fair`). No shared (read)
// locks, no leases, no counting; keys cannot be serialized, since a pthread
// mutex belongs to the thread that locked it.
//
// THE OWNER THREAD RULE. A lock of this store is owned by the thread that
// acquired it and must be released by that same thread. Releasing (or
// destroying a held Lock) on another thread returns FailedPrecondition and
// leaves the lock held; it comes back, reported to the next holder as an
// owner death, when the owning thread exits (the segment stays mapped in
// this process until then, even if its store is destroyed). A second Lock on a resource
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
// Capacity. 1 to 4,194,304 slots (1024 by default). A segment takes 324
// bytes of /dev/shm (memory) per slot on x86-64, all of it allocated when
// the segment is created, so a /dev/shm too small for it is an error then
// (ResourceExhausted), never a crash later: 324 KiB for 1024 slots, 41 MiB
// for 131,072, 1.3 GiB for the most. A first acquisition costs about the
// same with 1 and with 100,000 resources as long as the table is at most
// about three quarters full: give it room (e.g. capacity=131072 for 100,000
// resources). A full table costs a pass over every slot per refused
// acquisition.
//
// The segment's settings (capacity, mode, pi) are fixed by whoever creates
// it; later stores use its capacity and refuse it with FailedPrecondition if
// its layout (version, word size, slot size) or its `pi` setting differs from
// theirs. Segments of ipclock versions with at most 65,536 slots (layout
// version 1) are refused that way: remove them once no process uses them.
//
// REMOVING A SEGMENT. Stop every process that uses it, then
// `rm /dev/shm/ipclock.NAME` (or `RemoveShmSegment()`). A segment removed
// while processes use it leaves them on the old copy while new processes
// make a new one: two holders for one name. systemd-logind does exactly that
// at a user's logout when RemoveIPC=yes (its default) for users that are not
// system users; run such services as system users or set RemoveIPC=no.
//
// Losing a held lock. Nothing can keep a process that starts after the
// removal from being granted the lock on its new segment; what the store
// guarantees is that the holder on the old one is told. A lock is held
// while the path /dev/shm/ipclock.NAME still names the segment this store
// mapped (same device and inode) and the thread that acquired it still
// holds its mutex; otherwise it is lost, and the store says so with Aborted
// naming the segment: "was removed (systemd-logind RemoveIPC does this at
// logout)", "was replaced" (removed, and a new one made), "was renamed", or
// "the thread that acquired the lock ... exited". When each check runs:
//   * `Lock::CheckAcquired()` and the watch of lock_watch.h: every time (a
//     stat(2) of the path and a read of the mutex's owner, taking nothing,
//     so the watch's thread may run it). The watch also puts an inotify
//     watch on the segment, whose removal (IN_ATTRIB) triggers the check at
//     once: a watched lock hears of it within milliseconds, whatever the
//     watch's interval.
//   * A release: at most once per second of the wall clock per store. A
//     release always lets the mutex go (processes that opened the old
//     segment may wait on it), then returns Aborted if this or any earlier
//     check of the store found the segment lost.
//   * A first acquisition (a Key with no slot yet): at most once per tick of
//     CLOCK_MONOTONIC_COARSE (1 to 10 ms, CONFIG_HZ). A reused Lock looks at
//     nothing itself, to stay as cheap as the mutex. Once any check of the
//     store (any of the above) found the segment lost, every acquisition
//     through the store is refused with FailedPrecondition.
// Not seen, where no watch runs: a loss by a release within the second of
// the store's last such check, by a first acquisition within its tick, and
// by a reused Lock before any check noticed. No check closes the window
// between itself and the next use; the cure is to keep the segment from
// being removed (above). A check that cannot stat the path makes
// CheckAcquired() return Unavailable and changes nothing else.
//
// Priority inheritance (`pi=true`). Timed waits on PI mutexes use
// CLOCK_MONOTONIC where glibc (2.35+) and the kernel (5.14+, FUTEX_LOCK_PI2)
// accept it. Older pairs refuse it, and there a timed wait on a `pi=true`
// store sleeps until a CLOCK_REALTIME time computed from the remaining
// timeout: a step of the wall clock during the wait shortens or stretches
// it. Waits without a timeout and tries are unaffected.
//
// Fairness. On a plain segment (the default) the lock goes to whoever
// takes it first after a release: usually the releaser itself, if it
// acquires again at once, since a waiter must first wake up. A process that
// releases and re-acquires in a loop can keep a waiter out for as long as
// it loops (doc/performance.md measures it). On a segment of
// priority-inheritance mutexes (`pi=true` or `fair=true`) the kernel hands
// the mutex to its top waiter at the release (FUTEX_UNLOCK_PI): the
// releaser finds it taken and queues. Waiters are ordered by priority and,
// among threads of one priority (every non-real-time thread counts as one
// priority since Linux 5.15), in the order they began to wait; a try never
// takes a lock that has waiters. A waiter killed while it waits leaves the
// kernel's queue at once, and a holder killed while others wait hands the
// mutex to the first of them, which is told of the death. The uncontended
// acquisition and release cost the same as on a plain segment
// (doc/performance.md).
//
// Priority inheritance. On the same segments, a thread waiting for a lock
// lends its priority to the holder until the release: a SCHED_FIFO waiter
// is held up by the holder's critical section only, never by a thread whose
// priority lies between theirs (the classic inversion, which
// tests/priority_inversion_test.cc shows with and without). This is the only
// store that can do so: the kernel boosts the owner of a PI futex, and no
// other primitive the stores use (flock, SysV or POSIX semaphores, a
// server's lock) has an owner thread for it to boost.
//
// Async waits (ipclock/async.h) sleep on the futex word of the slot's
// robust mutex, through io_uring where the kernel allows, and try the lock
// on the event loop's thread, which then owns it. Not on segments of
// priority-inheritance mutexes (`pi=true` or `fair=true`;
// FailedPrecondition): the kernel hands a PI mutex only to its own waiters.
//
// Security. /dev/shm is shared by all users. With mode 0600 only the
// creator's user can use the segment; any user who can open a segment can
// also hold its locks forever or corrupt it. The store reads every value in
// the segment as written by such a user: a corrupted header is refused, a
// corrupted slot costs exclusion or errors, neither crashes the process; but
// one who can write the segment can also shrink it (ftruncate), and a touch
// of the vanished part is SIGBUS, which no check can prevent. A segment that
// another user created before you is used if its mode lets you open it.

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
  // Slots of a segment this store creates (1 to 4,194,304): the most
  // resources held at once. Each slot takes 324 bytes of /dev/shm on x86-64
  // (see "Capacity" above).
  uint32_t capacity = 1024;
  // Priority-inheritance mutexes (PTHREAD_PRIO_INHERIT), for real-time
  // threads that must not be held up by a lower-priority holder. Such a
  // segment is fair too (see "Fairness" above).
  bool priority_inheritance = false;
  // Waiters served in order, none starved (capability `fair`): the segment
  // is made of the same priority-inheritance mutexes as with
  // `priority_inheritance`, so either option asks for the one kind of
  // segment, and a store asking for neither refuses it.
  bool fair = false;
  // What to do where systemd-logind may delete this store's locks at logout
  // (remove_ipc.h).
  RemoveIpcPolicy remove_ipc = RemoveIpcPolicy::kWarn;
};

// Opens or creates the segment. InvalidArgument for a bad name or option;
// FailedPrecondition for a segment of another layout or `pi` setting, or one
// whose creator has not initialized it for 5 s; ResourceExhausted when
// /dev/shm cannot hold a new segment of this capacity (nothing is left
// behind); the OS error otherwise (e.g. PermissionDenied for another user's
// segment).
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
  // When the holder acquired it (Unix seconds); 0 if unknown (no holder,
  // or one of an ipclock build before listings had it).
  int64_t held_since = 0;
  // The processes waiting for it, with when each began (Unix seconds),
  // oldest first: the blocking waits of ipclock processes, which mark
  // their wait on the segment (a POSIX record lock that /proc/locks shows,
  // and that goes with its process). Threads of one process that began in
  // the same second are one waiter; waits through ipclock/async.h are not
  // marked.
  struct Waiter {
    pid_t pid = 0;
    int64_t since = 0;
  };
  std::vector<Waiter> waiters;
};

// The slots of /dev/shm/ipclock.<name> that are bound to a resource, for
// `ipclock list`. Read-only: the segment is mapped PROT_READ and no mutex is
// taken, so the listing is a snapshot; a slot being rebound at that instant
// is retried a few times, then left out, and one being acquired may show the
// holder and fence from just before. Never creates the segment: NotFound if
// there is none; FailedPrecondition for one of another layout.
absl::StatusOr<std::vector<ShmSlotInfo>> ListShmSlots(absl::string_view name);

}  // namespace ipclock

#endif  // IPCLOCK_SHM_STORE_H_
