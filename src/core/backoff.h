// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A jittered, bounded exponential backoff: the one every store uses whose
// waits poll (memcached, a table row, Redis without a notification, a
// combined store's members) or that retries while a server is unreachable.
// The jitter (+/-25 %) keeps processes that started waiting together from
// asking together ever after; it is drawn afresh in a forked child.

#ifndef IPCLOCK_CORE_BACKOFF_H_
#define IPCLOCK_CORE_BACKOFF_H_

#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"

namespace ipclock {

class Backoff {
 public:
  // Steps start at `first` and double up to `max`.
  Backoff(absl::Duration first, absl::Duration max) : next_(first), max_(max) {}

  // Sleeps for the next step, never past `deadline`; with a `cancel_fd`
  // (Key::cancel_fd()), not past its turning readable either.
  void Sleep(Deadline deadline, int cancel_fd = -1);

 private:
  absl::Duration next_;
  absl::Duration max_;
};

}  // namespace ipclock

#endif  // IPCLOCK_CORE_BACKOFF_H_
