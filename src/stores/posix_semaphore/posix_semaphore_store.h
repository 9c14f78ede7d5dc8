// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_POSIX_SEMAPHORE_STORE_H_
#define IPCLOCK_STORES_POSIX_SEMAPHORE_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/stores/posix_semaphore_store.h"

namespace ipclock {

// Its driver and entry (core/store_entry.h), which the registry lists. The
// driver builds a PosixSemaphoreStore from a parsed `posix-semaphore` DSN (no
// address; options mode and prefix).
IPCLOCK_STORE_ENTRY(PosixSemaphore, Scope::kLocal, IpcKind::kPosixShm, "", 1, "posix-semaphore");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSIX_SEMAPHORE_STORE_H_
