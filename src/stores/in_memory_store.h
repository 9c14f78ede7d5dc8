// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_IN_MEMORY_STORE_H_
#define IPCLOCK_STORES_IN_MEMORY_STORE_H_

#include "ipclock/in_memory_store.h"

#endif  // IPCLOCK_STORES_IN_MEMORY_STORE_H_
