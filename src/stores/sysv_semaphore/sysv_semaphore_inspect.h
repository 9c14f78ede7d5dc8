// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The SysV `semaphore` store seen from outside (`ListHeldLocks()`): the sets
// ListSemaphoreSets() finds whose lock semaphore (#0) is below its permits.
//
// Caveats:
//   * A set's key is a hash of the resource, so the resource can only be
//     named when the caller gives it (`ListRequest::resource`); other
//     programs' 3- or 5-semaphore sets may show up too.
//   * GETPID is the last process to operate on #0. For a mutex that is the
//     holder; with several permits it is only the latest one to acquire or
//     release.
//   * Sets we may not read (mode, another IPC namespace) are not seen.

#ifndef IPCLOCK_STORES_SYSV_SEMAPHORE_INSPECT_H_
#define IPCLOCK_STORES_SYSV_SEMAPHORE_INSPECT_H_

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "ipclock/admin/inspect.h"

namespace ipclock {

// The lister of its entry (core/store_entry.h) for `semaphore` DSNs; reads
// the `key_scheme` option as the store does.
absl::StatusOr<HeldLocks> ListSemaphoreLocks(Dsn& dsn, const ListRequest& request);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SYSV_SEMAPHORE_INSPECT_H_
