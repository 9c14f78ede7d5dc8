// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/flock_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
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
// Lock dir. Created if missing with `dir_mode`. The dir and every dir above
// it must be safe (platform rule, as OpenSSH's StrictModes): the dir owned by
// us or root, and not world-writable unless sticky; every ancestor owned by
// us or root and writable by nobody else, except a sticky ancestor such as
// /tmp, whose entry on the path is ours or root's. Anything else is refused
// with PermissionDenied naming the dir or ancestor and its owner: whoever can
// write the dir can swap lock files under us, and whoever can write a dir
// above it can rename it away. A symbolic link as the lock dir is refused.
// The default dir is `/run/lock/ipclock` for root, else
// `$XDG_RUNTIME_DIR/ipclock`, else `/tmp/ipclock-<uid>` (doc/stores.md says what
// each choice risks).
//
// Holder record. In Symfony naming mode the store writes a 64-byte record at
// the start of the lock file while it holds an exclusive lock: a fencing
// counter that grows with every exclusive acquisition, and a "held" mark that
// a clean release clears. A holder that finds the mark still set knows the
// previous one died holding the lock (flock releases on death, so the lock
// itself always comes back). PHP ignores the file's content. In `kPath` mode
// the file is never written (it may be a user's data file): no fencing and
// no owner-death reports. A record that cannot be read or written fails the
// acquisition (the lock is let go): a fence is never reset to 0 by an I/O
// error, and never goes below what this process saw of the file before
// (a peer that truncates the file, as `exec 9>FILE` does, wipes the count
// for the others). With the record on, the process that creates a file
// also writes the resource's name after the record, once, for `ipclock
// list` (the file name keeps only part of it).
//
// Cost. A Lock that is acquired again reuses its open file, and a destroyed
// Lock's file stays open, idle, in the store (`idle_files` of them, least
// recently used closed first), so that the next Lock on the same resource
// opens nothing and hashes nothing. An idle file goes to one Lock at a time:
// two Locks of one process never share an open file (flock locks belong to
// it), and exclude each other as two processes do. From the second
// acquisition through one file on, the holder record is read and written
// through a shared mapping of the file's first page (`map_record`), so a
// reused lock costs the flock(2) pair and no other system call. A truncation
// of the file by another process (`exec 9>file` in a shell truncates) cannot
// crash the program through that mapping: a SIGBUS on the page is caught
// (the store installs a handler that passes every other SIGBUS on to the
// action it found), the page is dropped, and the record is read and written
// with pread/pwrite again, the release writing the whole record back. A
// program that puts its own SIGBUS handler in place after the first mapping,
// without chaining to the one it replaces, loses that guard until the next
// mapping installs it again; `map_record = false` keeps every record access
// a system call. Records are mapped only on tmpfs, ext4, xfs, btrfs and
// f2fs. While a store keeps idle files open (for writing), a read-only
// remount of their filesystem fails with EBUSY; destroy the store first, or
// set `idle_files` to 0.
//
// What is checked, and when. A lock file can be deleted, and a lock dir
// removed or renamed (a tmp cleaner, an admin, `rm -rf`), by whoever may
// write the dir above it; flock cannot prevent it, and afterwards a process
// opening the path locks another file than the holder's. A check finds
// whether the file we locked is still linked and still the file at its path
// (fstatat of its name in the lock dir), and the lock dir still the dir at
// its path (stat from "/", which also sees a dir above it renamed). It runs:
//   * at acquisition, after flock(2) granted the lock, when the lock was
//     granted after a wait, or when the file or the dir was last found in
//     place more than 1 ms ago (opening the file counts for the file). A lock
//     granted on a file that is no longer the one at its path is let go and
//     the path opened again (the dir made anew if it is gone, see below);
//   * at release, when the last check is more than 1 ms old: a lock found
//     lost is released all the same, and the release returns Aborted;
//   * in `CheckHeld` (`Lock::CheckAcquired()`, and a `LockWatch` at once
//     when inotify reports the lock file or the lock dir deleted, moved or
//     changed, when its 50 ms probe finds the lock dir's path resolving to
//     another dir, and when the process's mount table changes; and every
//     `check_interval`, ten times less often on a local filesystem, where
//     those tell of every loss): Aborted, saying "lock file X was
//     deleted", "lock file X was renamed or replaced", "lock dir X was
//     removed", or "lock dir X was renamed or replaced".
// So a lock reused within a millisecond makes no check system call, and a
// deletion is missed at acquisition only when both it and another process's
// locking of the new file fall in that millisecond; such a lock, like any
// lock whose file goes while it is held, is found lost by the next check:
// by the watch at once for the file's or dir's own events and a mount, within
// 50 ms for a dir above it renamed (which inotify does not report), and at
// the next release or acquisition more than 1 ms later.
//
// A lock dir that vanished is made anew only when this store object holds no
// lock in the old one; until then acquisitions fail with Unavailable, and the
// holders are told by their checks and releases (Aborted). A dir that was
// replaced is checked as a new one (owner, mode, ancestors).
//
// Files are opened O_CLOEXEC|O_NOFOLLOW|O_NONBLOCK and checked with fstat(2)
// before use: a symbolic link, a FIFO or a device (or, in Symfony naming
// mode, a dir) is a file of the wrong type, InvalidArgument (ipclock/errors.h),
// never locked nor waited on (a socket cannot be opened at all: ENXIO). Lock files are never deleted: deleting one that
// others have open lets two processes hold "the same" lock on two inodes.
//
// Timed waits use a blocking flock(2) that a one-shot CLOCK_MONOTONIC timer
// interrupts at the deadline with a real-time signal aimed at the waiting
// thread (the highest SIGRTMIN..SIGRTMAX whose disposition is default, with a
// handler that does nothing, installed on first use). The kernel wakes the
// waiter as soon as the holder releases; nothing polls.
//
// Fairness. flock(2) serves nobody in order: a release wakes every
// blocked waiter and whoever runs first gets the lock, which is usually
// the releaser itself if it locks again at once. A process that releases
// and re-acquires in a loop can keep the others out for as long as it
// loops, and readers that overlap keep a writer out for as long as any
// reader holds (doc/performance.md measures both). With `fair=true` each
// lock file carries a queue of tickets (src/stores/ticket_queue/ticket_queue.h, at byte
// 256 of the file, which grows to about 1 KiB; PHP and flock(1) ignore the
// content): a Lock that must wait takes a ticket and sleeps until it is
// first, and only the first waiter waits in flock(2); nobody, a try
// included, takes the lock while someone queues. So waiters are served in
// the order they began to wait, readers and writers alike: a reader that
// comes after a waiting writer waits for it, and no writer starves. The
// free path reads two words of the mapped page and writes nothing. A waiter
// killed in the queue is passed over once it has been first for about
// 100 ms, one whose timeout ran out at once; a holder killed while others
// wait is the kernel's (its flock goes), and the first waiter gets the
// lock and is told of the death by the holder record. Fair among the Locks
// of stores with `fair=true` only: PHP, flock(1) and stores without it do
// not queue and may take the lock out of turn. Conversions (promotion,
// demotion) do not queue. Needs Symfony naming (the file is written) and a
// dir on tmpfs, ext4, xfs, btrfs or f2fs (the queue is a shared mapping):
// InvalidArgument or FailedPrecondition otherwise, and FailedPrecondition
// for a lock file this user may only read. No priority inheritance: a flock
// has no owner thread whose priority the kernel could raise.
//
// Caveats of flock(2) itself, which this store inherits:
//   * Promotion (shared to exclusive) is not atomic in Linux: the kernel drops
//     the shared lock before it queues for the exclusive one. If promotion
//     fails the store takes the shared lock back when it can; if a writer got
//     in between, Acquire returns false and the key holds nothing.
//   * flock over NFS is emulated with byte-range locks on some kernels and
//     not at all on others; keep lock dirs on local filesystems.
//   * Locks belong to the open file, so a fork()ed child's copy of a held
//     Lock shares its parent's lock. The child's release of it closes the
//     child's descriptor and leaves the parent's lock alone; the child's own
//     Locks open files of their own. ipclock opens with O_CLOEXEC so exec'd
//     programs do not inherit them, unless handed on on purpose
//     (`FlockDescriptorOf()` below).

#ifndef IPCLOCK_FLOCK_STORE_H_
#define IPCLOCK_FLOCK_STORE_H_

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/lock.h"
#include "ipclock/remove_ipc.h"
#include "ipclock/store.h"

namespace ipclock {

// The most idle files a store may keep open.
inline constexpr size_t kFlockMaxIdleFiles = 4096;

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
  // Read and write the holder record through a shared mapping of the lock
  // file's first page once a file is reused (see "Cost" above).
  bool map_record = true;
  // Lock files of destroyed Locks kept open for the next Lock on the same
  // resource (at most kFlockMaxIdleFiles; 0 closes each with its Lock).
  size_t idle_files = 64;
  // Waiters served in order, none starved, writers included (see
  // "Fairness" above). Symfony naming only, in a dir on tmpfs, ext4, xfs,
  // btrfs or f2fs.
  bool fair = false;
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

// The descriptor of the open file that holds `lock`, if it is held on a
// flock store; -1 otherwise (any other store, a lock not held). Owned by
// the store: for a program that hands the lock on to a child it starts,
// as flock(1) does, by letting the child inherit it (clear its
// FD_CLOEXEC in the child). The lock then lasts until the last process
// that has the open file closes it or the holder releases it.
int FlockDescriptorOf(const Lock& lock);

}  // namespace ipclock

#endif  // IPCLOCK_FLOCK_STORE_H_
