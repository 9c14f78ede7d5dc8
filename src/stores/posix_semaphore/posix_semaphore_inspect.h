// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The posix-semaphore store seen from outside (`ListHeldLocks()`): the
// registries in /dev/shm ("<prefix>.<32 hex>.reg"), read through
// ReadRegistrySnapshot(), and each semaphore's value. A registry slot marked
// holding is a holder; one whose process is gone holds a permit that the
// next attempt on the resource gives back. The resource itself is only a
// hash here, so it is named only when the caller gives it.

#ifndef IPCLOCK_STORES_POSIX_SEMAPHORE_INSPECT_H_
#define IPCLOCK_STORES_POSIX_SEMAPHORE_INSPECT_H_

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "ipclock/admin/inspect.h"

namespace ipclock {

// The lister of its entry (core/store_entry.h) for `posix-semaphore` DSNs;
// reads the `prefix` option as the store does.
absl::StatusOr<HeldLocks> ListPosixSemaphoreLocks(Dsn& dsn, const ListRequest& request);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSIX_SEMAPHORE_INSPECT_H_
