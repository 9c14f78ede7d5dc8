// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_CORE_LEASE_OVERRUN_H_
#define IPCLOCK_CORE_LEASE_OVERRUN_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/lease_overrun.h"

namespace ipclock {

// Tells the lease-overrun handler about a lock released `overrun` after its
// lease (`ttl`) ran out, and returns the Aborted status Lock::Release()
// gives for it.
absl::Status ReportLeaseOverrun(absl::string_view store,
                                absl::string_view resource, absl::Duration ttl,
                                absl::Duration overrun);

}  // namespace ipclock

#endif  // IPCLOCK_CORE_LEASE_OVERRUN_H_
