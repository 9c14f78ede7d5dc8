// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The report of a watched lock's loss: its sink, run with no other mutex
// held, on a thread of its own.

#ifndef IPCLOCK_CORE_WATCH_REPORT_H_
#define IPCLOCK_CORE_WATCH_REPORT_H_

#include <memory>
#include <mutex>

#include "core/watch_entry.h"

namespace ipclock {
namespace internal {

// Takes entry.report_mu unless this thread is running entry's report,
// which holds it already.
std::unique_lock<std::mutex> ReportTurn(WatchEntry& entry);

// Under entry.report_mu: delivers the report found and not yet delivered.
void DeliverLocked(WatchEntry& entry);

// Delivers the report on a thread of its own, so that a sink that blocks
// delays no check; on this thread if none can be made.
void Deliver(const std::shared_ptr<WatchEntry>& entry);

}  // namespace internal
}  // namespace ipclock

#endif  // IPCLOCK_CORE_WATCH_REPORT_H_
