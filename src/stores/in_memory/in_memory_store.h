// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_IN_MEMORY_STORE_H_
#define IPCLOCK_STORES_IN_MEMORY_STORE_H_

#include "core/store_entry.h"
#include "ipclock/stores/in_memory_store.h"

namespace ipclock {

// `in-memory` (alias `memory`): no address, no options.
// Its driver and entry (core/store_entry.h), which the registry lists.
IPCLOCK_STORE_ENTRY(InMemory, Scope::kProcess, std::nullopt, "", 1, "in-memory", "memory");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_IN_MEMORY_STORE_H_
