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
// Also here: `SignalsBlockedScope`, for starting a library's threads with
// every signal blocked (they inherit the starter's mask), so that the
// program's signals stay on the program's threads, as StartThread()
// (thread.h) does for ipclock's own.

#ifndef IPCLOCK_PLATFORM_EVENT_SIGNAL_H_
#define IPCLOCK_PLATFORM_EVENT_SIGNAL_H_

#include <signal.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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

 private:
  explicit EventSignal(ScopedFd fd) : fd_(std::move(fd)) {}
  ScopedFd fd_;
};

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
