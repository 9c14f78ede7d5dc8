// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/socket_send.h"

#include <errno.h>
#include <sys/socket.h>

#include <algorithm>

#include "platform/faults.h"

namespace ipclock {

int SendAll(int fd, absl::string_view data, size_t* sent) {
  *sent = 0;
  while (*sent < data.size()) {
    size_t len = data.size() - *sent;
    size_t short_bytes = 0;
    if (int err = TakeFault(FaultPoint::kWrite, &short_bytes); err > 0) {
      return err;
    } else if (err < 0) {
      len = std::min(len, short_bytes);
    }
    ssize_t n = send(fd, data.data() + *sent, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    *sent += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace ipclock
