// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The pause between two tries of a store that has nothing to sleep on while
// it waits (a table row): short at first, so that a lock released soon is
// taken soon, then doubling to a cap, so that a long wait costs the server
// little; jittered, so that waiters that started together do not ask
// together.

#ifndef IPCLOCK_STORES_POLL_BACKOFF_H_
#define IPCLOCK_STORES_POLL_BACKOFF_H_

#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"

namespace ipclock {

class PollBackoff {
 public:
  PollBackoff(absl::Duration first, absl::Duration max) : next_(first), max_(max) {}
  // Sleeps for the next step (0.75 to 1.25 times it), never past `deadline`.
  void Sleep(Deadline deadline);

 private:
  absl::Duration next_;
  absl::Duration max_;
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POLL_BACKOFF_H_
