// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_FLOCK_STORE_H_
#define IPCLOCK_STORES_FLOCK_STORE_H_

#include "core/dsn.h"
#include "ipclock/flock_store.h"

namespace ipclock {

// Builds a FlockStore from a parsed `flock` DSN: `flock`, `flock:///dir`,
// options naming=symfony|path, dir_mode, file_mode, record.
absl::StatusOr<std::shared_ptr<Store>> FlockStoreFromDsn(Dsn& dsn);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_FLOCK_STORE_H_
