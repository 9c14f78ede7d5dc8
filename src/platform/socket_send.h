// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Writing a request to a server's socket without SIGPIPE.
//
// A write(2) to a socket whose peer has gone raises SIGPIPE, whose default
// action kills the process. A library must not change the program's signal
// dispositions, and blocking the signal around each write costs four system
// calls per request. send(2) with MSG_NOSIGNAL reports EPIPE instead, in
// one call.

#ifndef IPCLOCK_PLATFORM_SOCKET_SEND_H_
#define IPCLOCK_PLATFORM_SOCKET_SEND_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace ipclock {

// Sends all of `data` on the connected stream socket `fd`, retrying short
// sends and EINTR. Returns 0, or the errno of the send that failed (EAGAIN
// when the socket's SO_SNDTIMEO passed first). `*sent` is what went out
// before a failure: 0 means the server received nothing of this request.
int SendAll(int fd, absl::string_view data, size_t* sent);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SOCKET_SEND_H_
