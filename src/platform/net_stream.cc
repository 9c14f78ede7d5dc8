// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/net_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "platform/errors.h"
#include "platform/socket_wait.h"

namespace ipclock {

namespace {

// TCP keepalive on idle streams: 10 s of silence, then 3 probes 5 s apart.
constexpr int kKeepIdleSeconds = 10;
constexpr int kKeepIntervalSeconds = 5;
constexpr int kKeepCount = 3;

std::string OsText(int err) { return absl::StrCat(strerror(err), " [", ErrnoName(err), "]"); }

// The milliseconds poll(2) may sleep before `deadline`, rounded up; -1 for
// none. 0 once it has passed.
int PollMillis(MonotonicDeadline deadline) {
  if (deadline.is_never()) return -1;
  const int64_t left = deadline.nanos() - MonotonicNowNanos();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<int64_t>((left + 999999) / 1000000, INT_MAX));
}

// Waits for `events` on `fd`: > 0 ready (or hung up, or in error), 0 when
// `deadline` passed.
int PollUntil(int fd, short events, MonotonicDeadline deadline) {
  struct pollfd p = {fd, events, 0};
  for (;;) {
    const int ms = PollMillis(deadline);
    const int r = poll(&p, 1, ms);
    if (r > 0) return r;
    if (r < 0 && errno != EINTR) return 1;  // the next call says what is wrong
    if (r == 0 && ms == 0) return 0;
    if (r == 0 && deadline.has_passed()) return 0;
  }
}

// The plain stream's reads: bytes read, 0 at end of stream, -errno
// (ETIMEDOUT when `deadline` passed first).
ssize_t RawRead(int fd, char* buf, size_t len, MonotonicDeadline deadline) {
  for (;;) {
    const ssize_t n = recv(fd, buf, len, 0);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -errno;
    if (PollUntil(fd, POLLIN, deadline) == 0) return -ETIMEDOUT;
  }
}

absl::Status RawWrite(int fd, absl::string_view data, MonotonicDeadline deadline) {
  while (!data.empty()) {
    // MSG_NOSIGNAL: a server that hung up is EPIPE, not SIGPIPE.
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      return absl::UnavailableError(absl::StrCat("write: ", OsText(errno)));
    }
    if (PollUntil(fd, POLLOUT, deadline) == 0) {
      return absl::DeadlineExceededError("write: the server took nothing in time");
    }
  }
  return absl::OkStatus();
}

class TcpStream final : public ByteStream {
 public:
  explicit TcpStream(int fd) : ByteStream(fd) {}
  ~TcpStream() override { CloseSocket(); }

  absl::Status Write(absl::string_view data, MonotonicDeadline deadline) override {
    return RawWrite(fd_, data, deadline);
  }

  absl::StatusOr<size_t> Read(char* buf, size_t len, MonotonicDeadline deadline) override {
    const ssize_t n = RawRead(fd_, buf, len, deadline);
    if (n >= 0) return static_cast<size_t>(n);
    if (n == -ETIMEDOUT) return absl::DeadlineExceededError("no reply in time");
    return absl::UnavailableError(absl::StrCat("read: ", OsText(static_cast<int>(-n))));
  }
};

absl::Status ConnectFailure(const std::string& where, int err) {
  return absl::UnavailableError(absl::StrCat("connect to ", where, ": ", OsText(err)));
}

}  // namespace

bool internal::WaitFor(int fd, short events, MonotonicDeadline deadline) {
  return PollUntil(fd, events, deadline) != 0;
}

ByteStream::ByteStream(int fd) : fd_(fd), pid_(getpid()) {}

bool ByteStream::ours() const { return pid_ == getpid(); }

void ByteStream::CloseSocket() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

absl::Status ByteStream::MoveToDescriptor(int number) {
  if (number == fd_) return absl::OkStatus();
  if (dup3(fd_, number, O_CLOEXEC) < 0) {
    return absl::InternalError(absl::StrCat("dup3: ", OsText(errno)));
  }
  close(fd_);
  fd_ = number;
  return absl::OkStatus();
}


absl::StatusOr<std::unique_ptr<ByteStream>> ConnectTcp(const std::string& host, int port,
                                                       MonotonicDeadline deadline) {
  absl::StatusOr<int> fd = internal::ConnectSocket(host, port, deadline);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<ByteStream>(std::make_unique<TcpStream>(*fd));
}

WireProtocol ProbeProtocol(const std::string& host, int port, MonotonicDeadline deadline) {
  // A minimal TLS 1.2 ClientHello: one cipher suite, no extensions. A TLS
  // server answers with a handshake record or an alert.
  unsigned char hello[5 + 4 + 41] = {0x16, 0x03, 0x01, 0x00, 0x2d,  // record
                                     0x01, 0x00, 0x00, 0x29,        // ClientHello
                                     0x03, 0x03};                   // TLS 1.2
  const unsigned char rest[] = {0x00, 0x00, 0x02, 0xc0, 0x2f, 0x01, 0x00};
  memcpy(hello + 11 + 32, rest, sizeof(rest));  // after the random bytes (zeros do)
  // HTTP first: a server that reads HTTP may wait for more of a
  // ClientHello than this one, while a TLS server hangs up on HTTP at once.
  const absl::string_view probes[] = {
      "GET /version HTTP/1.0\r\n\r\n",
      absl::string_view(reinterpret_cast<char*>(hello), sizeof(hello))};
  const int64_t second = MonotonicNowNanos() + 1000000000;
  if (deadline.is_never() || deadline.nanos() > second) {
    deadline = MonotonicDeadline::AtNanos(second);
  }
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<int> fd = internal::ConnectSocket(host, port, deadline);
    if (!fd.ok()) return WireProtocol::kUnknown;
    char reply[5] = {};
    ssize_t got = 0;
    if (RawWrite(*fd, probes[i], deadline).ok()) {
      while (got < 5) {
        const ssize_t n = RawRead(*fd, reply + got, sizeof(reply) - got, deadline);
        if (n <= 0) break;
        got += n;
      }
    }
    close(*fd);
    if (i == 0 && got == 5 && memcmp(reply, "HTTP/", 5) == 0) return WireProtocol::kHttp;
    if (i == 1 && got >= 1 && (reply[0] == 0x16 || reply[0] == 0x15)) return WireProtocol::kTls;
  }
  return WireProtocol::kUnknown;
}

absl::StatusOr<int> internal::ConnectSocket(const std::string& host, int port,
                                            MonotonicDeadline deadline) {
  const std::string where = host.find(':') != std::string::npos
                                ? absl::StrCat("[", host, "]:", port)
                                : absl::StrCat(host, ":", port);
  struct addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
  struct addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  const int gai = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (gai != 0) {
    const std::string text = absl::StrCat("resolve ", host, ": ", gai_strerror(gai),
                                          gai == EAI_SYSTEM ? absl::StrCat(" (", OsText(errno), ")")
                                                            : std::string());
    // A name that does not resolve now may later (a member whose DNS
    // record comes with its container, a resolver that answers "no such
    // name" while its upstream is down), as the other stores take it:
    // transient. Only a service or family the resolver cannot take at all
    // is for the caller to fix.
    if (gai == EAI_SERVICE || gai == EAI_FAMILY) return absl::NotFoundError(text);
    return absl::UnavailableError(text);
  }
  int last_err = ECONNREFUSED;
  for (struct addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                          a->ai_protocol);
    if (fd < 0) {
      last_err = errno;
      continue;
    }
    int r = connect(fd, a->ai_addr, a->ai_addrlen);
    if (r < 0 && errno == EINPROGRESS) {
      if (PollUntil(fd, POLLOUT, deadline) == 0) {
        close(fd);
        last_err = ETIMEDOUT;
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = errno;
      r = err == 0 ? 0 : -1;
      errno = err;
    }
    if (r < 0) {
      last_err = errno;
      close(fd);
      continue;
    }
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    SetTcpKeepalive(fd, kKeepIdleSeconds, kKeepIntervalSeconds, kKeepCount);
    freeaddrinfo(found);
    return fd;
  }
  freeaddrinfo(found);
  return ConnectFailure(where, last_err);
}

}  // namespace ipclock
