// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_POSIX_SEMAPHORE_STORE_H_
#define IPCLOCK_STORES_POSIX_SEMAPHORE_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_registry.h"
#include "ipclock/posix_semaphore_store.h"

namespace ipclock {

// Builds a PosixSemaphoreStore from a parsed `posix-semaphore` DSN (no
// address; options mode and prefix).
absl::StatusOr<std::shared_ptr<Store>> PosixSemaphoreStoreFromDsn(
    Dsn& dsn, const StoreOptions& store_options);

// The registry's entry (core/store_registry.h).
extern const StoreDriver kPosixSemaphoreDriver;

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSIX_SEMAPHORE_STORE_H_
