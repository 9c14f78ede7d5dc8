// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/in_memory_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
//
// A store whose locks live in this process's memory (DSN `in-memory`). It
// excludes threads and Lock objects of one process from each other, and
// nothing else: use it for tests and for programs that are the only process
// that needs the lock. It has exclusive, shared and counting locks, leases,
// fencing tokens, and blocking waits on a condition variable.

#ifndef IPCLOCK_IN_MEMORY_STORE_H_
#define IPCLOCK_IN_MEMORY_STORE_H_

#include <memory>

#include "ipclock/store.h"

namespace ipclock {

std::shared_ptr<Store> NewInMemoryStore();

}  // namespace ipclock

#endif  // IPCLOCK_IN_MEMORY_STORE_H_
