// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Bridges from threads that ipclock does not own to descriptors that it
// polls. A client library that runs its own threads (the ZooKeeper client
// calls back on its completion thread) reports an event by `Notify()`ing an
// `EventSignal`; the watch on held locks polls `fd()` among its poll_fds and
// turns readable at once. The C API's watch hands one to the program's
// event loop the same way. An eventfd: one descriptor, no pipe pair, and a
// Notify() that never blocks.
//
// Also here: the waits of ipclock::Canceller (lock.h), whose eventfd a
// signal handler writes: `WaitReadableOrCancelled()` sleeps on a
// descriptor, on the canceller's, or on both; and `SignalsBlockedScope`,
// for starting a library's threads with every signal blocked (they
// inherit the starter's mask), so that the program's signals stay on the
// program's threads, as StartThread() (thread.h) does for ipclock's own.

#ifndef IPCLOCK_PLATFORM_EVENT_SIGNAL_H_
#define IPCLOCK_PLATFORM_EVENT_SIGNAL_H_

#include <signal.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "platform/monotonic_deadline.h"
#include "platform/scoped_fd.h"

namespace ipclock {

class EventSignal {
 public:
  // The OS error (e.g. ResourceExhausted at the descriptor limit).
  // `user` names who asked, for the error message.
  static absl::StatusOr<EventSignal> Create(absl::string_view user = "ipclock");

  EventSignal(EventSignal&&) = default;
  EventSignal& operator=(EventSignal&&) = default;

  // Readable from the first Notify() until Drain(). Close-on-exec.
  int fd() const { return fd_.get(); }
  // Thread-safe, never blocks, async-signal-safe.
  void Notify() const;
  // Consumes every Notify() so far; true if there was any.
  bool Drain() const;
  // Hands the descriptor over; this object is then empty.
  int Release() { return fd_.release(); }

  // Notify() on a descriptor of an EventSignal that was released.
  // Async-signal-safe.
  static void NotifyFd(int fd);
  // Closes such a descriptor.
  static void CloseFd(int fd);

 private:
  explicit EventSignal(ScopedFd fd) : fd_(std::move(fd)) {}
  ScopedFd fd_;
};

enum class CancellableWait {
  kReady,      // `fd` is readable, hung up or in error
  kCancelled,  // `cancel_fd` is readable
  kTimeout,    // `until` passed first
};

// Sleeps until `fd` turns readable (-1: no such descriptor, a plain sleep),
// `cancel_fd` turns readable (-1: none), or `until`. EINTR ends the sleep
// early with kTimeout only if `until` has passed; otherwise the sleep goes
// on, so that a signal handler that wrote `cancel_fd` is seen at once.
// Neither descriptor is read.
CancellableWait WaitReadableOrCancelled(int fd, int cancel_fd, MonotonicDeadline until);

// Blocks every signal in this thread for the scope's life.
class SignalsBlockedScope {
 public:
  SignalsBlockedScope();
  ~SignalsBlockedScope();
  SignalsBlockedScope(const SignalsBlockedScope&) = delete;
  SignalsBlockedScope& operator=(const SignalsBlockedScope&) = delete;

 private:
  sigset_t old_;
};

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_EVENT_SIGNAL_H_
