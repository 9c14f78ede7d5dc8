// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/tcp_probe.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "platform/scoped_fd.h"

namespace ipclock {
namespace {

enum class Probe { kRefused, kOther };

Probe ConnectOnce(const struct addrinfo& ai, int timeout_ms) {
  ScopedFd fd(socket(ai.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Probe::kOther;
  if (connect(fd.get(), ai.ai_addr, ai.ai_addrlen) == 0) return Probe::kOther;
  if (errno == ECONNREFUSED) return Probe::kRefused;
  if (errno != EINPROGRESS) return Probe::kOther;
  struct pollfd p = {fd.get(), POLLOUT, 0};
  int n;
  do {
    n = poll(&p, 1, timeout_ms);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return Probe::kOther;
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return Probe::kOther;
  return err == ECONNREFUSED ? Probe::kRefused : Probe::kOther;
}

}  // namespace

bool EveryAddressRefuses(const char* host, int port, int timeout_ms) {
  char service[8];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
  struct addrinfo* found = nullptr;
  if (getaddrinfo(host, service, &hints, &found) != 0) return false;
  bool refused = found != nullptr;
  for (const struct addrinfo* ai = found; ai != nullptr && refused; ai = ai->ai_next) {
    refused = ConnectOnce(*ai, timeout_ms) == Probe::kRefused;
  }
  freeaddrinfo(found);
  return refused;
}

}  // namespace ipclock
