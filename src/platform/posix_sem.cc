// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/posix_sem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "platform/descriptors.h"
#include "platform/faults.h"
#include "platform/files.h"

namespace ipclock {

namespace {

constexpr char kShmDir[] = "/dev/shm";

// Opens `path` as a shm object would be (see OpenShmFile()).
int OpenPath(const std::string& path, bool writable, ScopedFd* fd, struct stat* st) {
  if (int err = TakeFault(FaultPoint::kOpen)) return err;
  const int flags = (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
                    O_NOCTTY;
  ScopedFd opened(AboveStdio(open(path.c_str(), flags)));
  if (!opened.valid()) return errno;
  if (int err = FstatFd(opened.get(), st)) return err;
  *fd = std::move(opened);
  return 0;
}

// linkat(2) of an unlinked (O_TMPFILE) file: EEXIST if `to` is taken.
int LinkPath(int fd, const std::string& to) {
  if (int err = TakeFault(FaultPoint::kLink)) return err;
  char from[40];
  snprintf(from, sizeof(from), "/proc/self/fd/%d", fd);
  if (linkat(AT_FDCWD, from, AT_FDCWD, to.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  if (errno != ENOENT) return errno;
  // No /proc: the direct form, which needs CAP_DAC_READ_SEARCH.
  return linkat(fd, "", AT_FDCWD, to.c_str(), AT_EMPTY_PATH) == 0 ? 0 : errno;
}

}  // namespace

ShmFileId FileIdOf(const struct stat& st) {
  ShmFileId id;
  id.dev = static_cast<uint64_t>(st.st_dev);
  id.ino = static_cast<uint64_t>(st.st_ino);
  return id;
}

std::string ShmPath(const std::string& name) { return kShmDir + name; }

std::string SemPath(const std::string& name) {
  // "/x" -> /dev/shm/sem.x, as glibc names them.
  return std::string(kShmDir) + "/sem." + name.substr(name.empty() ? 0 : 1);
}

int OpenShmFile(const std::string& name, bool writable, ScopedFd* fd, struct stat* st) {
  return OpenPath(ShmPath(name), writable, fd, st);
}

int CreateUnlinkedShmFile(mode_t mode, ScopedFd* fd) {
  if (int err = TakeFault(FaultPoint::kOpen)) return err;
  ScopedFd made(AboveStdio(open(kShmDir, O_TMPFILE | O_RDWR | O_CLOEXEC, mode)));
  if (!made.valid()) return errno;
  if (int err = TakeFault(FaultPoint::kChmod)) return err;
  if (fchmod(made.get(), mode) != 0) return errno;
  *fd = std::move(made);
  return 0;
}

int LinkShmFile(int fd, const std::string& name) { return LinkPath(fd, ShmPath(name)); }

int UnlinkShmFile(const std::string& name) {
  if (int err = TakeFault(FaultPoint::kUnlink)) return err;
  return unlink(ShmPath(name).c_str()) == 0 ? 0 : errno;
}

int StatShmName(const std::string& name, struct stat* st) {
  if (int err = TakeFault(FaultPoint::kStat)) return err;
  return lstat(ShmPath(name).c_str(), st) == 0 ? 0 : errno;
}

int StatSemName(const std::string& name, struct stat* st) {
  if (int err = TakeFault(FaultPoint::kStat)) return err;
  return lstat(SemPath(name).c_str(), st) == 0 ? 0 : errno;
}

int FstatFd(int fd, struct stat* st) {
  if (int err = TakeFault(FaultPoint::kStat)) return err;
  return fstat(fd, st) == 0 ? 0 : errno;
}

int TruncateFd(int fd, off_t size) {
  if (int err = TakeFault(FaultPoint::kTruncate)) return err;
  for (;;) {
    if (ftruncate(fd, size) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

int MapShared(int fd, size_t size, bool writable, void** out) {
  if (int err = TakeFault(FaultPoint::kMmap)) return err;
  void* map = mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                   MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return errno;
  *out = map;
  return 0;
}

void Unmap(void* addr, size_t size) {
  // Fails only for an address range that is not a mapping: a bug, and
  // nothing to do about it at run time.
  (void)munmap(addr, size);
}

int CreateNamedSem(const std::string& name, mode_t mode, unsigned value, NamedSem* out) {
  ScopedFd fd;
  if (int err = CreateUnlinkedShmFile(mode, &fd)) return err;
  sem_t image;
  memset(&image, 0, sizeof(image));
  if (sem_init(&image, /*pshared=*/1, value) != 0) return errno;
  if (int err = WriteAll(fd.get(), &image, sizeof(image))) return err;
  struct stat st;
  if (int err = FstatFd(fd.get(), &st)) return err;
  void* map = nullptr;
  if (int err = MapShared(fd.get(), sizeof(sem_t), true, &map)) return err;
  const std::string path = SemPath(name);
  int err = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    // A leftover of that name is replaced: see the header.
    err = UnlinkNamedSem(name);
    if (err != 0 && err != ENOENT) break;
    err = LinkPath(fd.get(), path);
    if (err != EEXIST) break;  // EEXIST: made again in between; once more
  }
  if (err != 0) {
    Unmap(map, sizeof(sem_t));
    return err;
  }
  out->sem = static_cast<sem_t*>(map);
  out->id = FileIdOf(st);
  return 0;
}

int OpenNamedSem(const std::string& name, bool writable, NamedSem* out) {
  ScopedFd fd;
  struct stat st;
  if (int err = OpenPath(SemPath(name), writable, &fd, &st)) return err;
  if (!S_ISREG(st.st_mode) || st.st_size < static_cast<off_t>(sizeof(sem_t))) return EBADFD;
  void* map = nullptr;
  if (int err = MapShared(fd.get(), sizeof(sem_t), writable, &map)) return err;
  out->sem = static_cast<sem_t*>(map);
  out->id = FileIdOf(st);
  return 0;
}

void CloseNamedSem(NamedSem* sem) {
  if (sem->sem != nullptr) Unmap(sem->sem, sizeof(sem_t));
  sem->sem = nullptr;
}

int OpenNamedSemPath(const std::string& name, ScopedFd* fd, ShmFileId* id) {
  if (int err = TakeFault(FaultPoint::kOpen)) return err;
  ScopedFd opened(AboveStdio(open(SemPath(name).c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC)));
  if (!opened.valid()) return errno;
  struct stat st;
  if (int err = FstatFd(opened.get(), &st)) return err;
  *id = FileIdOf(st);
  *fd = std::move(opened);
  return 0;
}

int UnlinkNamedSem(const std::string& name) {
  if (int err = TakeFault(FaultPoint::kUnlink)) return err;
  return unlink(SemPath(name).c_str()) == 0 ? 0 : errno;
}

int SemPost(sem_t* sem) {
  if (int err = TakeFault(FaultPoint::kSemPost)) return err;
  return sem_post(sem) == 0 ? 0 : errno;
}

int SemTryWait(sem_t* sem) {
  if (int err = TakeFault(FaultPoint::kSemWait)) return err;
  for (;;) {
    if (sem_trywait(sem) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

int SemClockWait(sem_t* sem, int64_t monotonic_deadline_nanos) {
  if (int err = TakeFault(FaultPoint::kSemWait)) return err;
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(monotonic_deadline_nanos / 1000000000);
  ts.tv_nsec = static_cast<long>(monotonic_deadline_nanos % 1000000000);
  return sem_clockwait(sem, CLOCK_MONOTONIC, &ts) == 0 ? 0 : errno;
}

int SemGetValue(sem_t* sem, int* value) {
  return sem_getvalue(sem, value) == 0 ? 0 : errno;
}

}  // namespace ipclock
