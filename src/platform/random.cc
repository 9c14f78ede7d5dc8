// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/random.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include "platform/errors.h"

namespace ipclock {

absl::Status FillRandom(void* buf, size_t len) {
  auto* out = static_cast<unsigned char*>(buf);
  size_t done = 0;
  while (done < len) {
    ssize_t n = getrandom(out + done, len - done, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  if (done == len) return absl::OkStatus();
  int getrandom_errno = errno;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(getrandom_errno, "ipclock", "", "getrandom");
  while (done < len) {
    ssize_t n = read(fd, out + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fd);
      return ErrnoError(err, "ipclock", "", "read /dev/urandom");
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  return absl::OkStatus();
}

}  // namespace ipclock
