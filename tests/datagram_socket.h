// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A Unix datagram socket of the test's own, bound as systemd binds its
// notify socket and journald its native one, for the CLI suites to stand
// in for them.

#ifndef IPCLOCK_TESTS_DATAGRAM_SOCKET_H_
#define IPCLOCK_TESTS_DATAGRAM_SOCKET_H_

#include <string>

namespace ipclock_test {

// A datagram socket bound at `address`: a path, or an abstract name
// ("@name"). Fails the test if it cannot be made. A path is removed when
// the socket is closed.
class BoundDatagramSocket {
 public:
  explicit BoundDatagramSocket(const std::string& address);
  BoundDatagramSocket(const BoundDatagramSocket&) = delete;
  BoundDatagramSocket& operator=(const BoundDatagramSocket&) = delete;
  ~BoundDatagramSocket();

  int fd() const { return fd_; }
  // A new socket connected to this one, for the caller to send on and
  // close; fails the test if it cannot connect.
  int ConnectWriter() const;

 private:
  std::string address_;
  int fd_ = -1;
};

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_DATAGRAM_SOCKET_H_
