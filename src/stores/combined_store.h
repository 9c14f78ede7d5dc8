// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_COMBINED_STORE_H_
#define IPCLOCK_STORES_COMBINED_STORE_H_

#include "core/dsn.h"
#include "core/store_registry.h"
#include "ipclock/combined_store.h"
#include "ipclock/store_factory.h"

namespace ipclock {

// Builds a combined store from a parsed `combined` DSN: option `strategy`
// (consensus, the default, or unanimous) and members `store1`, `store2`, ...
// each built by StoreFromDsn() with `options`.
absl::StatusOr<std::shared_ptr<Store>> CombinedStoreFromDsn(
    Dsn& dsn, const StoreOptions& options);

// The registry's entry (core/store_registry.h).
extern const StoreDriver kCombinedDriver;

}  // namespace ipclock

#endif  // IPCLOCK_STORES_COMBINED_STORE_H_
