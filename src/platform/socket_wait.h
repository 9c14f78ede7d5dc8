// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The socket calls of database clients whose libraries only block: waiting
// for a reply up to a deadline, noticing a server that hung up while we sent
// nothing, TCP keepalive, and making a socket inherited through fork() safe
// to close.

#ifndef IPCLOCK_PLATFORM_SOCKET_WAIT_H_
#define IPCLOCK_PLATFORM_SOCKET_WAIT_H_

#include <cstddef>

#include "platform/monotonic_deadline.h"

namespace ipclock {

enum class SocketWait {
  kReady,    // the event came, or the socket is in error or hung up (the
             // client library's next call says which)
  kTimeout,  // `until` passed first
};

// Waits until `fd` is readable (`for_write` false) or writable, retrying on
// EINTR. A descriptor poll(2) refuses counts as ready: the caller's next
// read or write reports the error.
SocketWait WaitSocket(int fd, bool for_write, MonotonicDeadline until);

// Whether `fd` has input waiting, or is hung up or in error, right now. For
// a connection on which we expect nothing (a session that holds a lock and
// sends no query), any input means the server spoke unasked: it ended the
// session (an administrator's KILL, a shutdown) and closed the socket.
bool HasPendingInput(int fd);

// Reads what `fd` has received, up to `size` bytes, without waiting (a
// connection whose client library's own reads block, read here for a
// server's pushed messages). 0 with `*got` bytes (at least one); EAGAIN
// when nothing is waiting; EPIPE when the peer closed the connection; the
// errno otherwise. EINTR is retried.
int ReceiveAvailable(int fd, char* buf, size_t size, size_t* got);

// Turns TCP keepalive on for `fd` with the given probe times, so that a peer
// host that vanished is noticed in idle + interval * count seconds rather
// than the kernel's two hours. Does nothing to Unix sockets. Best effort: a
// socket that refuses keeps the kernel's defaults.
void SetTcpKeepalive(int fd, int idle_seconds, int interval_seconds, int count);

// Points descriptor number `fd` at /dev/null (dup3 swaps it atomically), for
// a connection inherited through fork(): the client library's goodbye then
// goes nowhere and its close() closes only this process's copy, leaving the
// parent's session alone. False if /dev/null could not be opened (the caller
// should then leak the connection rather than close it).
bool DetachInheritedSocket(int fd);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SOCKET_WAIT_H_
