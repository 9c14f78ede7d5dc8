// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock_rows.h"

#include "ipclock/lock.h"
#include "ipclock/store_factory.h"

namespace ipclock_bench {

absl::StatusOr<std::shared_ptr<ipclock::Store>> OpenStore(const std::string& dsn) {
  ipclock::StoreOptions options;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  return ipclock::StoreFromDsn(dsn, options);
}

double ReusedHandle(const RunShape& shape, const std::shared_ptr<ipclock::Store>& store,
                    const std::string& resource) {
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource);
  if (!lock.ok()) return -1;
  return MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<bool> got = lock->TryAcquire();
      if (!got.ok() || !*got) return false;
      if (!lock->Release().ok()) return false;
    }
    return true;
  });
}

double FullCycle(const RunShape& shape, const std::shared_ptr<ipclock::Store>& store,
                 const std::string& resource) {
  return MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource);
      if (!lock.ok()) return false;
      absl::StatusOr<bool> got = lock->TryAcquire();
      if (!got.ok() || !*got) return false;
      if (!lock->Release().ok()) return false;
    }
    return true;
  });
}

}  // namespace ipclock_bench
