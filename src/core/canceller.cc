// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/lock.h"
#include "platform/event_signal.h"

namespace ipclock {

absl::StatusOr<std::shared_ptr<Canceller>> Canceller::Create() {
  absl::StatusOr<EventSignal> signal = EventSignal::Create("ipclock: canceller");
  if (!signal.ok()) return signal.status();
  return std::shared_ptr<Canceller>(new Canceller(signal->Release()));
}

Canceller::~Canceller() { EventSignal::CloseFd(fd_); }

void Canceller::Cancel() {
  // The flag first: a wait that the eventfd wakes must find it set. The
  // eventfd is never drained, so that every wait, now or later, sees it.
  cancelled_.store(true, std::memory_order_release);
  EventSignal::NotifyFd(fd_);
}

}  // namespace ipclock
