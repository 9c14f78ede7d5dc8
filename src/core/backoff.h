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
#include "ipclock/spi/key.h"

namespace ipclock {

class Backoff {
 public:
  // Steps start at `first` and double up to `max`.
  Backoff(absl::Duration first, absl::Duration max) : next_(first), max_(max) {}

  // Sleeps for the next step, never past `deadline`; with a `cancel_fd`
  // (Key::cancel_fd()), not past its turning readable either.
  void Sleep(Deadline deadline, int cancel_fd = -1);

  // For the start of a polling wait: sleeps the first step when the wait
  // follows a try of the Lock's (Key::tried_just_now()), as it would after
  // a try of its own. That try found the lock held a moment ago; asking the
  // server again at once would find the same holder at the cost of a round
  // trip, so a contended acquisition asks once, then waits.
  void SleepIfTriedJustNow(const Key& key, Deadline deadline) {
    if (key.tried_just_now() && !deadline.has_passed()) Sleep(deadline);
  }

 private:
  absl::Duration next_;
  absl::Duration max_;
};

}  // namespace ipclock

#endif  // IPCLOCK_CORE_BACKOFF_H_
