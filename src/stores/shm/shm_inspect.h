// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The shm store seen from outside (`ListHeldLocks()`): the held slots of a
// segment, read through ListShmSlots(), which maps it read-only.

#ifndef IPCLOCK_STORES_SHM_INSPECT_H_
#define IPCLOCK_STORES_SHM_INSPECT_H_

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "ipclock/admin/inspect.h"

namespace ipclock {

// The lister of its entry (core/store_entry.h) for `shm://NAME`. A slot is
// held when its holder pid is set and that process is alive; the mutex is
// never tried, since a trylock that succeeded would make us a holder, and
// one taken from a dead holder would use up the owner-death report meant
// for the next real holder. A segment that does not exist holds no locks.
absl::StatusOr<HeldLocks> ListShmLocks(Dsn& dsn, const ListRequest& request);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SHM_INSPECT_H_
