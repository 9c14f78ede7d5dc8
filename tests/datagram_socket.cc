// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "datagram_socket.h"

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

namespace {

// `address` as a sockaddr_un, and the length that goes with it: an
// abstract name's leading '@' is a NUL, and it has no NUL at its end.
socklen_t UnixAddress(const std::string& address, struct sockaddr_un* addr) {
  memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  memcpy(addr->sun_path, address.data(), address.size());
  socklen_t len =
      static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + address.size() + 1);
  if (address[0] == '@') {
    addr->sun_path[0] = '\0';
    --len;
  }
  return len;
}

}  // namespace

BoundDatagramSocket::BoundDatagramSocket(const std::string& address) : address_(address) {
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail_msg("socket: %s", strerror(errno));
  struct sockaddr_un addr;
  const socklen_t len = UnixAddress(address_, &addr);
  if (bind(fd_, reinterpret_cast<struct sockaddr*>(&addr), len) != 0) {
    fail_msg("bind %s: %s", address_.c_str(), strerror(errno));
  }
}

BoundDatagramSocket::~BoundDatagramSocket() {
  close(fd_);
  if (address_[0] == '/') unlink(address_.c_str());
}

int BoundDatagramSocket::ConnectWriter() const {
  struct sockaddr_un addr;
  const socklen_t len = UnixAddress(address_, &addr);
  const int writer = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (writer < 0 || connect(writer, reinterpret_cast<struct sockaddr*>(&addr), len) != 0) {
    fail_msg("connect %s: %s", address_.c_str(), strerror(errno));
  }
  return writer;
}

}  // namespace ipclock_test
