// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the library's own machinery around a Lock (the watch on held locks,
// the async waiter, the C API) may reach that programs may not: the key and
// the store it operates on.

#ifndef IPCLOCK_CORE_LOCK_ACCESS_H_
#define IPCLOCK_CORE_LOCK_ACCESS_H_

#include "ipclock/lock.h"
#include "ipclock/spi/key.h"

namespace ipclock {
namespace internal {

class LockAccess {
 public:
  static Key& key(Lock& lock) { return *lock.key_; }
  static const Key& key(const Lock& lock) { return *lock.key_; }
  static Store& store(Lock& lock) { return *lock.store_; }
  static const std::shared_ptr<Store>& shared_store(const Lock& lock) {
    return lock.store_;
  }
  // Leaves the lock's LockGuard, if any, with nothing to release.
  static void DetachGuard(Lock& lock) { lock.DetachGuard(); }
  // Counts a loss of the lock's current acquisition in its metrics, once.
  static void NoteLost(Lock& lock) { lock.NoteLost(); }
};

}  // namespace internal
}  // namespace ipclock

#endif  // IPCLOCK_CORE_LOCK_ACCESS_H_
