// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/event_signal.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

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

void EventSignal::Notify() const {
  const uint64_t one = 1;
  // EAGAIN only when the counter is near 2^64: it is readable anyway.
  while (write(fd_.get(), &one, sizeof(one)) < 0 && errno == EINTR) {
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
