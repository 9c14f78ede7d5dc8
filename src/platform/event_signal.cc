// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/event_signal.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "platform/errors.h"
#include "platform/faults.h"

namespace ipclock {

absl::StatusOr<EventSignal> EventSignal::Create(absl::string_view user) {
  int err = TakeFault(FaultPoint::kOpen);
  int fd = -1;
  if (err == 0) {
    fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) err = errno;
  }
  if (fd < 0) return ErrnoError(err, user, "", "eventfd");
  return EventSignal(ScopedFd(fd));
}

void EventSignal::Notify() const { NotifyFd(fd_.get()); }

void EventSignal::NotifyFd(int fd) {
  // errno is the interrupted code's: a signal handler must leave it as it
  // found it.
  const int saved = errno;
  const uint64_t one = 1;
  // EAGAIN only when the counter is near 2^64: it is readable anyway.
  while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
  errno = saved;
}

void EventSignal::CloseFd(int fd) { ScopedFd closed(fd); }

CancellableWait WaitReadableOrCancelled(int fd, int cancel_fd, MonotonicDeadline until) {
  struct pollfd fds[2];
  nfds_t n = 0;
  const int fd_slot = fd >= 0 ? static_cast<int>(n) : -1;
  if (fd >= 0) fds[n++] = {fd, POLLIN, 0};
  const int cancel_slot = cancel_fd >= 0 ? static_cast<int>(n) : -1;
  if (cancel_fd >= 0) fds[n++] = {cancel_fd, POLLIN, 0};
  for (;;) {
    int timeout_ms = -1;
    if (!until.is_never()) {
      const int64_t left = until.nanos() - MonotonicNowNanos();
      if (left <= 0) {
        timeout_ms = 0;
      } else {
        // Rounded up: a wake before the deadline would only sleep again.
        timeout_ms = static_cast<int>(std::min<int64_t>((left + 999999) / 1000000, INT32_MAX));
      }
    }
    const int ready = poll(fds, n, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR && !until.has_passed()) continue;
      // Nothing else can fail with these arguments but EINTR and ENOMEM:
      // the caller looks again, as after a wake.
      return CancellableWait::kTimeout;
    }
    if (cancel_slot >= 0 && (fds[cancel_slot].revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
      return CancellableWait::kCancelled;
    }
    if (fd_slot >= 0 && fds[fd_slot].revents != 0) return CancellableWait::kReady;
    if (ready == 0 || until.has_passed()) return CancellableWait::kTimeout;
  }
}

bool EventSignal::Drain() const {
  uint64_t count = 0;
  ssize_t n;
  while ((n = read(fd_.get(), &count, sizeof(count))) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(sizeof(count)) && count > 0;
}

SignalsBlockedScope::SignalsBlockedScope() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_);
}

SignalsBlockedScope::~SignalsBlockedScope() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

}  // namespace ipclock
