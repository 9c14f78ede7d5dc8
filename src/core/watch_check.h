// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The check of one watched lock, and the lease times it plans by.

#ifndef IPCLOCK_CORE_WATCH_CHECK_H_
#define IPCLOCK_CORE_WATCH_CHECK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "core/watch_entry.h"
#include "ipclock/lock.h"

namespace ipclock {
namespace internal {

// When the lease of `lock` is next renewed: a third of the shorter of its
// TTL and what is left, so that two renewals may fail or be late before it
// runs out.
int64_t NextRenewal(const Lock& lock);

// When the lease of `lock` runs out (monotonic ns), or kNever.
int64_t LeaseEnd(const Lock& lock);

// Under entry.state_mu: records the loss `found` as what the watch found,
// with its report, unless a loss was found already. True if recorded.
bool RecordLossLocked(WatchEntry& entry, const absl::Status& found);

// The check itself, under entry.mu. True if this check is the one that
// found a loss (its report is then pending in the entry).
bool CheckLocked(WatchEntry& entry, bool renew, bool* confirmed = nullptr);

}  // namespace internal
}  // namespace ipclock

#endif  // IPCLOCK_CORE_WATCH_CHECK_H_
