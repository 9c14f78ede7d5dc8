// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_IN_MEMORY_STORE_H_
#define IPCLOCK_STORES_IN_MEMORY_STORE_H_

#include "core/store_entry.h"
#include "ipclock/stores/in_memory_store.h"

namespace ipclock {

// `in-memory` (alias `memory`): no address, no options.
extern const StoreDriver kInMemoryDriver;

// Its entry (core/store_entry.h), which the registry lists.
inline constexpr absl::string_view kInMemorySchemes[] = {"in-memory", "memory"};
inline constexpr StoreEntry kInMemoryEntry = {
    "in-memory", kInMemorySchemes, Scope::kProcess, std::nullopt, "", &kInMemoryDriver};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_IN_MEMORY_STORE_H_
