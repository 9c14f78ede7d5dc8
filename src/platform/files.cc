// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/files.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>

#include "platform/descriptors.h"
#include "platform/faults.h"

namespace ipclock {

int OpenFileAt(int dirfd, const char* name, int flags, mode_t mode, ScopedFd* out) {
  if (int err = TakeFault(FaultPoint::kOpen); err != 0) return err;
  for (;;) {
    // AboveStdio: a standard stream closed after the store was made.
    int fd = openat(dirfd, name, flags | O_CLOEXEC, mode);
    if (fd >= 0) {
      fd = AboveStdio(fd);
      if (fd < 0) return errno;
      out->reset(fd);
      return 0;
    }
    // open(2) of a FIFO or a device may sleep and be interrupted; callers
    // that can meet one pass O_NONBLOCK, and the retry is harmless anyway.
    if (errno != EINTR) return errno;
  }
}

int StatFd(int fd, struct stat* out) {
  if (int err = TakeFault(FaultPoint::kStat); err != 0) return err;
  return fstat(fd, out) == 0 ? 0 : errno;
}

int StatAt(int dirfd, const char* name, int flags, struct stat* out) {
  if (int err = TakeFault(FaultPoint::kStat); err != 0) return err;
  return fstatat(dirfd, name, out, flags) == 0 ? 0 : errno;
}

int StatFsFd(int fd, struct statfs* out) {
  if (int err = TakeFault(FaultPoint::kStat); err != 0) return err;
  for (;;) {
    if (fstatfs(fd, out) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

int ReadAt(int fd, void* buf, size_t size, off_t offset, size_t* got) {
  *got = 0;
  if (int err = TakeFault(FaultPoint::kRead); err != 0) return err;
  char* p = static_cast<char*>(buf);
  while (*got < size) {
    ssize_t n = pread(fd, p + *got, size - *got, offset + static_cast<off_t>(*got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;  // the end of the file
    *got += static_cast<size_t>(n);
  }
  return 0;
}

int WriteAllAt(int fd, const void* buf, size_t size, off_t offset) {
  const char* p = static_cast<const char*>(buf);
  size_t done = 0;
  while (done < size) {
    size_t want = size - done;
    size_t short_bytes = 0;
    int fault = TakeFault(FaultPoint::kWrite, &short_bytes);
    if (fault > 0) return fault;
    if (fault < 0) want = std::min(want, short_bytes);  // a test's short write
    ssize_t n = pwrite(fd, p + done, want, offset + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    // pwrite(2) of a regular file returns 0 only when it cannot write at all
    // without saying why; looping would spin.
    if (n == 0) return EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

namespace {

int WriteLoop(int fd, const void* buf, size_t size, bool fault_point) {
  const char* p = static_cast<const char*>(buf);
  while (size > 0) {
    size_t want = size;
    if (fault_point) {
      size_t short_bytes = 0;
      const int fault = TakeFault(FaultPoint::kWrite, &short_bytes);
      if (fault > 0) return fault;
      if (fault < 0) want = std::min(want, short_bytes);  // a test's short write
    }
    const ssize_t n = write(fd, p, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

int WriteAll(int fd, const void* buf, size_t size) {
  return WriteLoop(fd, buf, size, /*fault_point=*/true);
}

int WriteAllToStream(int fd, const void* buf, size_t size) {
  return WriteLoop(fd, buf, size, /*fault_point=*/false);
}

int ChmodFd(int fd, mode_t mode) {
  if (int err = TakeFault(FaultPoint::kChmod); err != 0) return err;
  for (;;) {
    if (fchmod(fd, mode) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

int SetByteRecordLock(int fd, uint64_t offset, bool take) {
  struct flock l = {};
  l.l_type = take ? F_RDLCK : F_UNLCK;
  l.l_whence = SEEK_SET;
  l.l_start = static_cast<off_t>(offset);
  l.l_len = 1;
  for (;;) {
    if (fcntl(fd, F_SETLK, &l) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

int GrowFileTo(int fd, off_t size) {
  // A short write armed for kWrite means nothing to a truncation.
  if (int err = TakeFault(FaultPoint::kWrite); err > 0) return err;
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  if (st.st_size >= size) return 0;
  // A racing grower asks for the same size: its ftruncate changes nothing.
  return ftruncate(fd, size) == 0 ? 0 : errno;
}

int MakeDirAt(int dirfd, const char* name, mode_t mode) {
  if (int err = TakeFault(FaultPoint::kMkdir); err != 0) return err;
  return mkdirat(dirfd, name, mode) == 0 ? 0 : errno;
}

int ReadLinkAt(int dirfd, const char* name, std::string* target) {
  if (int err = TakeFault(FaultPoint::kStat); err != 0) return err;
  // A link's target is at most PATH_MAX bytes on Linux; grow until it fits.
  for (size_t size = 256; size <= 65536; size *= 2) {
    target->resize(size);
    ssize_t n = readlinkat(dirfd, name, &(*target)[0], size);
    if (n < 0) return errno;
    if (static_cast<size_t>(n) < size) {
      target->resize(static_cast<size_t>(n));
      return 0;
    }
  }
  return ENAMETOOLONG;
}

int AccessAt(int dirfd, const char* name, int mode) {
  if (int err = TakeFault(FaultPoint::kStat); err != 0) return err;
  return faccessat(dirfd, name, mode, AT_EACCESS) == 0 ? 0 : errno;
}

int FlockFd(int fd, int operation) {
  if (int err = TakeFault(FaultPoint::kFlock); err != 0) return err;
  return flock(fd, operation) == 0 ? 0 : errno;
}

int FlockFdRestarting(int fd, int operation) {
  for (;;) {
    int err = FlockFd(fd, operation);
    if (err != EINTR) return err;
  }
}

const char* FileTypeName(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "regular file";
    case S_IFDIR: return "directory";
    case S_IFIFO: return "FIFO (named pipe)";
    case S_IFSOCK: return "socket";
    case S_IFCHR: return "character device";
    case S_IFBLK: return "block device";
    case S_IFLNK: return "symbolic link";
    default: return "file of unknown type";
  }
}

}  // namespace ipclock
