// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "descriptors.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace ipclock_cli {

namespace {

// The most descriptors looked at one by one where neither close_range(2)
// (Linux 5.11) nor /proc is there.
constexpr int kMaxScanned = 1 << 16;

bool InKeep(int fd, const int* keep, int n_keep) {
  return std::binary_search(keep, keep + n_keep, fd);
}

void MarkCloseOnExec(int fd) {
  const int flags = fcntl(fd, F_GETFD);
  if (flags >= 0 && (flags & FD_CLOEXEC) == 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

// The same without close_range: each open descriptor in /proc/self/fd,
// read with getdents64 into a buffer on the stack (no opendir, which
// allocates), or else each number up to the descriptor limit.
void MarkOneByOne(const int* keep, int n_keep) {
  const int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    struct rlimit limit;
    int last = kMaxScanned;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < static_cast<rlim_t>(last)) {
      last = static_cast<int>(limit.rlim_cur);
    }
    for (int fd = 3; fd < last; ++fd) {
      if (!InKeep(fd, keep, n_keep)) MarkCloseOnExec(fd);
    }
    return;
  }
  alignas(8) char buf[4096];
  for (;;) {
    const long n = syscall(SYS_getdents64, dir, buf, sizeof(buf));
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
      uint16_t reclen;
      __builtin_memcpy(&reclen, buf + at + 16, sizeof(reclen));
      const char* name = buf + at + 19;
      at += reclen;
      if (name[0] < '0' || name[0] > '9') continue;
      int fd = 0;
      for (const char* p = name; *p >= '0' && *p <= '9'; ++p) fd = fd * 10 + (*p - '0');
      if (fd >= 3 && fd != dir && !InKeep(fd, keep, n_keep)) MarkCloseOnExec(fd);
    }
  }
  close(dir);
}

}  // namespace

void FillClosedStdio() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    // Nothing else runs yet: the lowest free descriptor is `fd`.
    const int opened = open("/dev/null", O_RDWR | O_NOCTTY);
    if (opened >= 0 && opened != fd) close(opened);
  }
}

std::vector<int> OpenDescriptors() {
  std::vector<int> out;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    for (int fd = 3; fd < kMaxScanned; ++fd) {
      if (fcntl(fd, F_GETFD) >= 0) out.push_back(fd);
    }
    return out;
  }
  const int own = dirfd(dir);
  while (const struct dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd < 3 || fd == own) continue;
    out.push_back(static_cast<int>(fd));
  }
  closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

void KeepOnlyAcrossExec(const int* keep, int n_keep) {
  unsigned first = 3;
  bool ranges_work = true;
  for (int i = 0; i <= n_keep && ranges_work; ++i) {
    // The gap below keep[i] (or, past the last, everything above).
    const unsigned last = i < n_keep ? static_cast<unsigned>(keep[i]) - 1 : ~0U;
    if (i < n_keep && keep[i] < static_cast<int>(first)) continue;
    if (last >= first &&
        syscall(SYS_close_range, first, last, CLOSE_RANGE_CLOEXEC) != 0) {
      ranges_work = false;
    }
    if (i < n_keep) first = static_cast<unsigned>(keep[i]) + 1;
  }
  if (!ranges_work) MarkOneByOne(keep, n_keep);
  for (int i = 0; i < n_keep; ++i) {
    const int flags = fcntl(keep[i], F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) != 0) fcntl(keep[i], F_SETFD, flags & ~FD_CLOEXEC);
  }
}

}  // namespace ipclock_cli
