// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/descriptors.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

namespace ipclock {

void FillClosedStdio() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    // The lowest free descriptor is `fd` unless another thread took it
    // first; then it is that thread's, and ours is closed again.
    int opened;
    do {
      opened = open("/dev/null", O_RDWR | O_NOCTTY);
    } while (opened < 0 && errno == EINTR);
    if (opened >= 0 && opened != fd) close(opened);
  }
}

int AboveStdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int saved = errno;
  close(fd);
  errno = saved;
  return moved;
}

bool SetCloseOnExec(int fd) {
  const int flags = fcntl(fd, F_GETFD);
  if (flags < 0) return false;
  if ((flags & FD_CLOEXEC) != 0) return true;
  return fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

}  // namespace ipclock
