// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/messages.h"
#include "core/lease_overrun.h"

#include <stdio.h>

#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/errors.h"

namespace ipclock {
namespace {

std::mutex& HandlerMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

// Never destroyed: a lock released by a static destructor at exit still
// finds a handler.
LeaseOverrunHandler& Handler() {
  static LeaseOverrunHandler* handler =
      new LeaseOverrunHandler(WriteLeaseOverrunMessage);
  return *handler;
}

// "1234ms", "1.5ms", "250us": whole microseconds, enough to tell a lease
// missed by a hair from one forgotten for minutes.
std::string Shown(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Microseconds(1)));
}

}  // namespace

LeaseOverrunHandler SetLeaseOverrunHandler(LeaseOverrunHandler handler) {
  std::lock_guard<std::mutex> guard(HandlerMutex());
  return std::exchange(Handler(), std::move(handler));
}

void WriteLeaseOverrunMessage(const LeaseOverrun& o) {
  std::string line = absl::StrCat(
      "ipclock: warning: ", o.store, ": resource ", QuoteResource(o.resource),
      ": the lease ran out ", Shown(o.overrun),
      " before release; another holder may have had the lock meanwhile");
  EmitMessage(MessageSeverity::kWarning, line);
}

absl::Status ReportLeaseOverrun(absl::string_view store,
                                absl::string_view resource, absl::Duration ttl,
                                absl::Duration overrun) {
  LeaseOverrun report{std::string(store), std::string(resource), ttl, overrun};
  LeaseOverrunHandler handler;
  {
    // A copy, called outside the mutex: a handler may take its time or
    // release another lock.
    std::lock_guard<std::mutex> guard(HandlerMutex());
    handler = Handler();
  }
  if (handler) handler(report);
  return StoreError(absl::StatusCode::kAborted, store, resource,
                    absl::StrCat("the lease ran out ", Shown(overrun),
                                 " before release; another holder may have "
                                 "had the lock meanwhile"));
}

}  // namespace ipclock
