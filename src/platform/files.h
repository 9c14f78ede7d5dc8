// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Files and dirs: the system calls the flock store and the lock-dir checks
// make, each one asking `TakeFault()` (platform/faults.h) first so that tests
// can make it fail as a full disk or an exhausted descriptor table would.
//
// Every function returns 0 or the errno of the failure, and is marked
// [[nodiscard]]: a caller decides what each failure means (the stores turn
// them into statuses with ErrnoError, naming the call and the file), and the
// compiler refuses a dropped result. EINTR is retried where repeating the
// call is harmless (reads, writes, stats); `FlockFd` returns it, because an
// interrupted blocking flock is how a timed wait ends (platform/timed_flock.h).

#ifndef IPCLOCK_PLATFORM_FILES_H_
#define IPCLOCK_PLATFORM_FILES_H_

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "platform/scoped_fd.h"

namespace ipclock {

// openat(2). `dirfd` may be AT_FDCWD. O_CLOEXEC is always added.
[[nodiscard]] int OpenFileAt(int dirfd, const char* name, int flags, mode_t mode,
                             ScopedFd* out);

// fstat(2), fstatat(2) and fstatfs(2).
[[nodiscard]] int StatFd(int fd, struct stat* out);
[[nodiscard]] int StatAt(int dirfd, const char* name, int flags, struct stat* out);
[[nodiscard]] int StatFsFd(int fd, struct statfs* out);

// pread(2) until `size` bytes or the end of the file; `*got` says how many
// were read (fewer than `size` only at the end of the file).
[[nodiscard]] int ReadAt(int fd, void* buf, size_t size, off_t offset, size_t* got);

// pwrite(2) of all `size` bytes: a short write is continued where it
// stopped, so that either everything was written or an error (ENOSPC, EIO,
// EFBIG) is returned. A write that makes no progress at all is EIO.
[[nodiscard]] int WriteAllAt(int fd, const void* buf, size_t size, off_t offset);

// write(2) of all `size` bytes at the file's offset, continued after a
// short write and after EINTR; the errno of the write that failed, or EIO
// for one that wrote nothing.
[[nodiscard]] int WriteAll(int fd, const void* buf, size_t size);

// The same without the fault point, for a stream (a pipe, a terminal) that
// the library's own diagnostics go to: a test that fails writes must not
// silence what the library says about them.
[[nodiscard]] int WriteAllToStream(int fd, const void* buf, size_t size);

// fchmod(2).
[[nodiscard]] int ChmodFd(int fd, mode_t mode);

// A POSIX record lock on the one byte at `offset` (fcntl F_SETLK, never
// waiting): a shared one (F_RDLCK) when `take`, none (F_UNLCK) otherwise.
// fcntl's rules hold: the lock belongs to the process (its threads share
// it, a second take of the same byte is the same lock), any close(2) of
// the file by the process drops all of them, and a forked child has none.
// Independent of flock(2) locks, except where a filesystem emulates flock
// with record locks (NFS): not for lock files there.
[[nodiscard]] int SetByteRecordLock(int fd, uint64_t offset, bool take);

// Makes the file at least `size` bytes long (ftruncate(2) when fstat(2) finds
// it shorter; the new bytes read as zeros). Never shortens it.
[[nodiscard]] int GrowFileTo(int fd, off_t size);

// mkdirat(2).
[[nodiscard]] int MakeDirAt(int dirfd, const char* name, mode_t mode);

// readlinkat(2), the whole target.
[[nodiscard]] int ReadLinkAt(int dirfd, const char* name, std::string* target);

// faccessat(2) with AT_EACCESS: may this process `mode` (R_OK, W_OK...)?
[[nodiscard]] int AccessAt(int dirfd, const char* name, int mode);

// flock(2), one call: EINTR and EWOULDBLOCK are returned like any error.
[[nodiscard]] int FlockFd(int fd, int operation);

// FlockFd() restarted on EINTR: for tries with LOCK_NB, and for waits that
// no signal is meant to end (the semaphore registry's lock and a shared
// memory segment's are held for a few system calls only).
[[nodiscard]] int FlockFdRestarting(int fd, int operation);

// "FIFO", "socket", "character device", ... for messages about a file that
// is not what it should be.
const char* FileTypeName(mode_t mode);

// The same file: same device and inode.
inline bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_FILES_H_
