// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/watch_report.h"

#include <optional>
#include <thread>
#include <utility>

#include "core/diagnostics.h"
#include "platform/thread.h"

namespace ipclock {
namespace internal {

std::unique_lock<std::mutex> ReportTurn(WatchEntry& entry) {
  if (entry.reporter.load() == std::this_thread::get_id()) {
    return std::unique_lock<std::mutex>();
  }
  return std::unique_lock<std::mutex>(entry.report_mu);
}

void DeliverLocked(WatchEntry& entry) {
  if (entry.finished) return;  // its owner is done with it: nobody to tell
  std::optional<LossReport> loss;
  {
    std::lock_guard<std::mutex> guard(entry.state_mu);
    loss.swap(entry.report);
  }
  if (!loss) return;
  entry.reporter.store(std::this_thread::get_id());
  if (entry.options.diagnostics) {
    entry.options.diagnostics(loss->diagnostic);
  } else {
    EmitDiagnostic(loss->store.get(), loss->diagnostic);
  }
  entry.reporter.store(std::thread::id());
}

void Deliver(const std::shared_ptr<WatchEntry>& entry) {
  pthread_t thread;
  absl::Status started = StartThread(
      "ipclock-report",
      [entry] {
        std::unique_lock<std::mutex> turn(entry->report_mu);
        DeliverLocked(*entry);
      },
      &thread);
  if (started.ok()) {
    DetachThread(thread);
    return;
  }
  std::unique_lock<std::mutex> turn = ReportTurn(*entry);
  DeliverLocked(*entry);
}

}  // namespace internal
}  // namespace ipclock
