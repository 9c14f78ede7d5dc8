// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/watch_check.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/lock_access.h"
#include "ipclock/spi/store_interface.h"
#include "platform/errors.h"

namespace ipclock {
namespace internal {

int64_t NextRenewal(const Lock& lock) {
  if (!lock.store().capabilities().expiring) return kNever;
  absl::Duration lease = std::min(lock.options().ttl, lock.RemainingLifetime());
  if (lease == absl::InfiniteDuration()) return kNever;
  return Now() + absl::ToInt64Nanoseconds(lease / 3);
}

int64_t LeaseEnd(const Lock& lock) {
  if (!lock.store().capabilities().expiring) return kNever;
  const absl::Duration left = lock.RemainingLifetime();
  if (left == absl::InfiniteDuration()) return kNever;
  return Now() + absl::ToInt64Nanoseconds(left);
}

bool RecordLossLocked(WatchEntry& entry, const absl::Status& found) {
  if (entry.lost) return false;
  entry.lost = true;
  entry.error = found;
  LossReport report;
  report.store = entry.store;
  report.diagnostic.kind = DiagnosticKind::kLockLost;
  report.diagnostic.severity = DiagnosticSeverity::kWarning;
  report.diagnostic.text = absl::StrCat("ipclock: warning: lost a held lock: ", found.message());
  report.diagnostic.store = entry.describe;
  report.diagnostic.resource = entry.resource;
  report.diagnostic.status = found;
  entry.report = std::move(report);
  return true;
}

bool CheckLocked(WatchEntry& entry, bool renew, bool* confirmed) {
  if (confirmed != nullptr) *confirmed = false;
  {
    std::lock_guard<std::mutex> guard(entry.state_mu);
    if (entry.lost) return false;
  }
  if (!entry.lock || !entry.lock->is_acquired()) return false;
  Lock& lock = *entry.lock;
  absl::Status found;
  absl::Status renewed;
  if (renew) {
    renewed = lock.Refresh();
    if (absl::IsAborted(renewed)) {
      found = renewed;
    } else if (!renewed.ok() && lock.IsExpired()) {
      found = StoreError(absl::StatusCode::kAborted, lock.store().Describe(),
                         lock.resource(),
                         absl::StrCat("the lease ran out while it could not be "
                                      "renewed: ", renewed.message()));
    }
  }
  if (found.ok()) {
    absl::Status held = StoreCalls::CheckHeld(LockAccess::store(lock), LockAccess::key(lock));
    if (confirmed != nullptr) *confirmed = held.ok();
    if (absl::IsAborted(held)) {
      found = held;
    } else if (lock.store().capabilities().expiring && lock.IsExpired()) {
      found = StoreError(absl::StatusCode::kAborted, lock.store().Describe(),
                         lock.resource(),
                         held.ok() ? std::string("the lease ran out")
                                   : absl::StrCat("the lease ran out; the store "
                                                  "could not be asked: ",
                                                  held.message()));
    }
  }
  std::lock_guard<std::mutex> guard(entry.state_mu);
  if (found.ok()) {
    entry.lease_end = LeaseEnd(lock);
    return false;
  }
  if (!renewed.ok() && !absl::IsAborted(renewed) &&
      !absl::StrContains(found.message(), renewed.message())) {
    // The store found the lease gone a moment before the key did: the
    // failed renewal is still why.
    found = absl::Status(found.code(), absl::StrCat(found.message(),
                                                    "; it could not be renewed: ",
                                                    renewed.message()));
  }
  // Counted here, where the check holds the Lock; a loss declared from
  // outside the Lock (DeclareLeaseEnd) is counted when the Lock lets go.
  LockAccess::NoteLost(lock);
  return RecordLossLocked(entry, found);
}

}  // namespace internal
}  // namespace ipclock
