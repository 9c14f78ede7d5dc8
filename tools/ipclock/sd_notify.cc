// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "sd_notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>

namespace ipclock_cli {

ServiceNotifier& ServiceNotifier::FromEnvironment() {
  // Never destroyed: the watch's thread may still report a loss at exit.
  static ServiceNotifier* notifier = new ServiceNotifier(getenv("NOTIFY_SOCKET"));
  return *notifier;
}

ServiceNotifier::ServiceNotifier(const char* address) {
  if (address == nullptr) return;
  const size_t size = strlen(address);
  // Room for the path and the NUL that ends a path (an abstract name has
  // none, but its leading NUL takes the '@''s place).
  if (size < 2 || size >= sizeof(address_.sun_path)) return;
  if (address[0] != '/' && address[0] != '@') return;
  address_.sun_family = AF_UNIX;
  memcpy(address_.sun_path, address, size);
  if (address[0] == '@') {
    address_.sun_path[0] = '\0';
    length_ = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + size);
  } else {
    length_ = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + size + 1);
  }
}

ServiceNotifier::~ServiceNotifier() {
  if (fd_ >= 0) close(fd_);
}

bool ServiceNotifier::Send(absl::string_view state) {
  if (!active()) return false;
  std::lock_guard<std::mutex> guard(mu_);
  if (fd_ < 0) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) return false;
    // Connected, so that poll(2) tells when the reader's queue has room (an
    // unconnected datagram socket is always writable to poll).
    int rc;
    do {
      rc = connect(fd_, reinterpret_cast<const struct sockaddr*>(&address_), length_);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      close(fd_);
      fd_ = -1;
      return false;
    }
  }
  for (int attempt = 0;; ++attempt) {
    const ssize_t n = send(fd_, state.data(), state.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(state.size())) {
      stuck_ = false;
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && attempt == 0 && !stuck_) {
      // The reader's queue is full: wait a little for room, once.
      struct pollfd p = {fd_, POLLOUT, 0};
      int ready;
      do {
        ready = poll(&p, 1, kFullQueueWaitMillis);
      } while (ready < 0 && errno == EINTR);
      if (ready > 0) continue;
      stuck_ = true;
      return false;
    }
    if (n < 0 && errno != EAGAIN) {
      // The socket may have been made anew (the manager re-executed):
      // connect again at the next message.
      close(fd_);
      fd_ = -1;
    }
    return false;
  }
}

}  // namespace ipclock_cli
