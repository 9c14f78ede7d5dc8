// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/socket_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>


namespace ipclock {

SocketWait WaitSocket(int fd, bool for_write, MonotonicDeadline until) {
  struct pollfd p = {fd, static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
  for (;;) {
    int ms = -1;
    if (!until.is_never()) {
      const int64_t left = until.nanos() - MonotonicNowNanos();
      if (left <= 0) return SocketWait::kTimeout;
      ms = static_cast<int>(std::min<int64_t>((left + 999999) / 1000000, INT_MAX));
    }
    const int r = poll(&p, 1, ms);
    if (r > 0) return SocketWait::kReady;
    if (r < 0 && errno != EINTR) return SocketWait::kReady;
    // EINTR, or a poll that woke a little early: go round.
  }
}

bool HasPendingInput(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  return r != 0;  // input, hang-up, error, or a descriptor poll refuses
}

int ReceiveAvailable(int fd, char* buf, size_t size, size_t* got) {
  for (;;) {
    const ssize_t n = recv(fd, buf, size, MSG_DONTWAIT);
    if (n > 0) {
      *got = static_cast<size_t>(n);
      return 0;
    }
    if (n == 0) return EPIPE;
    if (errno == EINTR) continue;
    return errno == EWOULDBLOCK ? EAGAIN : errno;
  }
}

void SetTcpKeepalive(int fd, int idle_seconds, int interval_seconds, int count) {
  struct sockaddr_storage addr;
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<struct sockaddr*>(&addr), &len) != 0) return;
  if (addr.ss_family != AF_INET && addr.ss_family != AF_INET6) return;
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_seconds, sizeof(idle_seconds));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_seconds, sizeof(interval_seconds));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

bool DetachInheritedSocket(int fd) {
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) return false;
  int moved;
  do {
    moved = dup3(null_fd, fd, O_CLOEXEC);
  } while (moved < 0 && errno == EINTR);
  const bool ok = moved >= 0;
  close(null_fd);
  return ok;
}

}  // namespace ipclock
