// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// POSIX shared memory and named semaphores as files in /dev/shm: the only
// place that opens, creates, maps, links and unlinks them, and that calls
// sem_post(3), sem_trywait(3) and sem_clockwait(3). Each wrapper asks
// TakeFault() first and returns 0 or the errno of the failure.
//
// Why files and not shm_open(3)/sem_open(3). On Linux both are files in
// /dev/shm (a named semaphore is "sem.NAME" holding one sem_t), and going
// to the files directly gives what the two calls do not:
//   * an object is made complete under no name (O_TMPFILE) and linked into
//     place only then (linkat(2), which fails if the name is taken), so no
//     process ever opens a half-made one and a creator that dies leaves
//     nothing behind;
//   * a descriptor for every object, whose inode says whether it is still
//     linked and still the one at its name, and which inotify can watch;
//   * files opened with O_NONBLOCK and checked with fstat(2) before use, so
//     a FIFO or a device planted under one of our names is refused, not
//     waited on.
// A semaphore file is written with the bytes sem_init(3) gives a
// process-shared semaphore, which is what glibc's sem_open() itself writes,
// so programs that sem_open() the same name share it with us.
//
// Caveats:
//   * linkat(2) of an O_TMPFILE file goes through /proc/self/fd (AT_EMPTY_PATH
//     needs CAP_DAC_READ_SEARCH); without /proc it falls back to that.
//   * mode: O_TMPFILE applies the umask, so modes are set with fchmod(2).

#ifndef IPCLOCK_PLATFORM_POSIX_SEM_H_
#define IPCLOCK_PLATFORM_POSIX_SEM_H_

#include <semaphore.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "platform/scoped_fd.h"

namespace ipclock {

// Where an object lives: two opens name the same object when these agree.
struct ShmFileId {
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool operator==(const ShmFileId& o) const { return dev == o.dev && ino == o.ino; }
  bool operator!=(const ShmFileId& o) const { return !(*this == o); }
};
ShmFileId FileIdOf(const struct stat& st);

// The path of shm object `name` ("/x" is /dev/shm/x) and of named
// semaphore `name` (/dev/shm/sem.x).
std::string ShmPath(const std::string& name);
std::string SemPath(const std::string& name);

// Opens shm object `name` read-write (or read-only) without following a
// symbolic link and without blocking, and fstat()s it into `*st`. A FIFO,
// socket or device opens fine: callers check S_ISREG(st->st_mode).
int OpenShmFile(const std::string& name, bool writable, ScopedFd* fd, struct stat* st);
// A new shm file under no name yet, with exactly `mode`.
int CreateUnlinkedShmFile(mode_t mode, ScopedFd* fd);
// Gives the unlinked file `fd` the name `name`: EEXIST if it is taken.
int LinkShmFile(int fd, const std::string& name);
int UnlinkShmFile(const std::string& name);
// lstat of the object at `name`, or of the named semaphore at `name`.
int StatShmName(const std::string& name, struct stat* st);
int StatSemName(const std::string& name, struct stat* st);

int FstatFd(int fd, struct stat* st);
int TruncateFd(int fd, off_t size);
int MapShared(int fd, size_t size, bool writable, void** out);
void Unmap(void* addr, size_t size);

// A named semaphore, mapped.
struct NamedSem {
  sem_t* sem = nullptr;
  ShmFileId id;
};
// Makes semaphore `name` with `value` and exactly `mode`, replacing any file
// of that name (callers hold a lock that makes them its only creator).
int CreateNamedSem(const std::string& name, mode_t mode, unsigned value, NamedSem* out);
// Maps the existing semaphore `name` (read-only: for sem_getvalue() only).
// ENOENT if there is none; EBADFD for a file that is not one (not regular,
// or too small).
int OpenNamedSem(const std::string& name, bool writable, NamedSem* out);
void CloseNamedSem(NamedSem* sem);
int UnlinkNamedSem(const std::string& name);
// An O_PATH descriptor of semaphore `name` (not followed if a link), for
// inotify to watch, and the object's identity.
int OpenNamedSemPath(const std::string& name, ScopedFd* fd, ShmFileId* id);

int SemPost(sem_t* sem);
// 0 if a post was taken, EAGAIN if there was none.
int SemTryWait(sem_t* sem);
// Waits for a post until `monotonic_deadline_nanos` (CLOCK_MONOTONIC): 0,
// ETIMEDOUT or EINTR.
int SemClockWait(sem_t* sem, int64_t monotonic_deadline_nanos);
int SemGetValue(sem_t* sem, int* value);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_POSIX_SEM_H_
