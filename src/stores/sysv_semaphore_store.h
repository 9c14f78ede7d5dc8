// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_SYSV_SEMAPHORE_STORE_H_
#define IPCLOCK_STORES_SYSV_SEMAPHORE_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "ipclock/semaphore_store.h"

namespace ipclock {

// Builds a SemaphoreStore from a parsed `semaphore` DSN (no address; options
// key_scheme=md5|xxh3 and mode).
absl::StatusOr<std::shared_ptr<Store>> SemaphoreStoreFromDsn(Dsn& dsn);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SYSV_SEMAPHORE_STORE_H_
