// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The combined store (include/ipclock/stores/combined_store.h), as the
// registry's part of it (registry/combined_dsn.h) needs it.

#ifndef IPCLOCK_STORES_COMBINED_STORE_H_
#define IPCLOCK_STORES_COMBINED_STORE_H_

#include <vector>

#include "ipclock/store.h"
#include "ipclock/stores/combined_store.h"

namespace ipclock {

// What a combined store whose members have `members` can do: the same
// capabilities NewCombinedStore() gives it, without building anything.
Capabilities CombinedCapabilities(const std::vector<Capabilities>& members);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_COMBINED_STORE_H_
