// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Byte streams to a server for the protocol clients ipclock writes itself
// (the etcd store's HTTP/1.1): a TCP connection, plain or under TLS
// (tls_stream.h), with every read and write bounded by a deadline.
//
// The socket is non-blocking and close-on-exec, with TCP_NODELAY (a
// request is one write, and waiting for Nagle's ack would add a delayed-ack
// timeout to each round trip) and TCP keepalive (a server host that
// vanished is noticed on an idle stream within about 25 s).
//
// fork(): a stream belongs to the process that opened it. A child that
// inherits one must not write to it (the bytes would interleave with the
// parent's on the same connection); destroying the child's copy only
// closes the child's descriptor, which sends nothing (the parent's copy
// keeps the connection open), and a TLS stream then says no goodbye.

#ifndef IPCLOCK_PLATFORM_NET_STREAM_H_
#define IPCLOCK_PLATFORM_NET_STREAM_H_

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "platform/monotonic_deadline.h"

namespace ipclock {

class ByteStream {
 public:
  virtual ~ByteStream() = default;

  // Sends all of `data`. Unavailable naming the OS error, or DeadlineExceeded
  // when `deadline` passed first; either way the stream is unusable after.
  virtual absl::Status Write(absl::string_view data, MonotonicDeadline deadline) = 0;

  // Waits until bytes arrive or `deadline`, then reads up to `len` of them:
  // the number read, 0 once the server closed the stream, DeadlineExceeded
  // when nothing came in time (the stream stays usable), Unavailable naming
  // the OS error (or PermissionDenied for a TLS alert) otherwise.
  virtual absl::StatusOr<size_t> Read(char* buf, size_t len, MonotonicDeadline deadline) = 0;

  // The socket, for poll(2). Input that a TLS stream has already taken off
  // the socket is not shown there: see `HasBuffered()`.
  int fd() const { return fd_; }
  // Bytes received and decoded that `Read()` will return without waiting.
  virtual bool HasBuffered() const { return false; }
  // The process that opened the stream; no other may write to it.
  pid_t pid() const { return pid_; }
  bool ours() const;

  // Moves the socket to descriptor number `number` (dup3, close-on-exec),
  // closing whatever `number` was: a descriptor number handed out earlier
  // (a poll target) then refers to this stream. `number` must belong to
  // the caller.
  absl::Status MoveToDescriptor(int number);
  // Forgets the socket without closing it (nor saying goodbye on it): its
  // number now belongs to the caller, who may have moved another stream
  // onto it.
  void ForgetDescriptor() { fd_ = -1; }

 protected:
  explicit ByteStream(int fd);
  // Closes the socket (after the subclass said goodbye, if it does).
  void CloseSocket();

  int fd_;
  const pid_t pid_;
};

// Connects to `host`:`port` (a name, an IPv4 address, or an IPv6 address
// without brackets), trying each address the name resolves to until one
// answers. Unavailable naming the server and the OS error for a refused or
// timed-out connection (DeadlineExceeded is not used: a connect that did
// not finish by `deadline` is Unavailable), Unavailable also for a name
// that does not resolve (now) or a resolver that could not answer.
absl::StatusOr<std::unique_ptr<ByteStream>> ConnectTcp(const std::string& host, int port,
                                                       MonotonicDeadline deadline);

// What a server that hung up on us without a word speaks (etcd does that
// to plain HTTP on its TLS port, and to TLS on its plain one): a TLS
// ClientHello answered by a TLS record, or an HTTP request by an HTTP
// reply. kUnknown when it cannot tell.
enum class WireProtocol { kUnknown, kTls, kHttp };
WireProtocol ProbeProtocol(const std::string& host, int port, MonotonicDeadline deadline);

namespace internal {
// What the streams share, for tls_stream.cc: the connected socket
// (non-blocking, close-on-exec, options set; errors as ConnectTcp's), and
// a wait for `events` (POLLIN, POLLOUT) on it: false once `deadline`
// passed first.
absl::StatusOr<int> ConnectSocket(const std::string& host, int port, MonotonicDeadline deadline);
bool WaitFor(int fd, short events, MonotonicDeadline deadline);
}  // namespace internal

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_NET_STREAM_H_
