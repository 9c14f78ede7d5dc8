// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The service manager's notify protocol, as systemd speaks it: one datagram
// of "NAME=value" lines ("READY=1", "STATUS=...", "EXTEND_TIMEOUT_USEC=...")
// to the AF_UNIX socket named in $NOTIFY_SOCKET, a path or, starting with
// '@', an abstract name. systemd sets the variable for units whose
// NotifyAccess= lets the process speak (Type=notify sets NotifyAccess=main).
//
// Nothing here costs a system call while $NOTIFY_SOCKET is unset: reading
// it is a getenv, and the socket is made at the first message.

#ifndef IPCLOCK_TOOLS_IPCLOCK_SD_NOTIFY_H_
#define IPCLOCK_TOOLS_IPCLOCK_SD_NOTIFY_H_

#include <sys/socket.h>
#include <sys/un.h>

#include <mutex>
#include <string>

#include "absl/strings/string_view.h"

namespace ipclock_cli {

class ServiceNotifier {
 public:
  // The socket $NOTIFY_SOCKET names; inactive when it is unset, empty, or
  // an address this implementation does not speak (vsock:).
  static ServiceNotifier& FromEnvironment();

  ServiceNotifier(const ServiceNotifier&) = delete;
  ServiceNotifier& operator=(const ServiceNotifier&) = delete;
  ~ServiceNotifier();

  bool active() const { return length_ != 0; }

  // Sends `state` (one or more "NAME=value" lines, newline-separated).
  // False when inactive or the send failed (the service manager may have
  // gone; nothing depends on it being heard). Thread-safe.
  //
  // Never blocks for long: a reader that has stopped reading (a hung
  // manager, a full queue) must not keep ipclock, and so the lock, from
  // ending once COMMAND has. A full queue is waited on for at most
  // kFullQueueWaitMillis, then the message is dropped; after a message was
  // dropped so, the next ones are tried once without waiting until one
  // gets through.
  bool Send(absl::string_view state);

  static constexpr int kFullQueueWaitMillis = 100;

 private:
  explicit ServiceNotifier(const char* address);

  struct sockaddr_un address_ {};
  socklen_t length_ = 0;
  std::mutex mu_;
  int fd_ = -1;         // guarded by mu_
  bool stuck_ = false;  // guarded by mu_
};

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_SD_NOTIFY_H_
