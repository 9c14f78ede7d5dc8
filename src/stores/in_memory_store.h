// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_IN_MEMORY_STORE_H_
#define IPCLOCK_STORES_IN_MEMORY_STORE_H_

#include "core/store_registry.h"
#include "ipclock/in_memory_store.h"

namespace ipclock {

// `in-memory` (alias `memory`): no address, no options.
extern const StoreDriver kInMemoryDriver;

}  // namespace ipclock

#endif  // IPCLOCK_STORES_IN_MEMORY_STORE_H_
