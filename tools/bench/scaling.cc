// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "scaling.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "ipclock/lock.h"

namespace ipclock_bench {

namespace {

bool OneCycle(const std::shared_ptr<ipclock::Store>& store, const std::string& name) {
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, name);
  if (!lock.ok()) return false;
  absl::StatusOr<bool> got = lock->TryAcquire();
  return got.ok() && *got && lock->Release().ok();
}

}  // namespace

double FullCycleOverResources(const RunShape& shape,
                              const std::shared_ptr<ipclock::Store>& store,
                              const std::string& prefix, int resources) {
  std::vector<std::string> names;
  names.reserve(resources);
  for (int i = 0; i < resources; ++i) {
    names.push_back(absl::StrCat(prefix, i));
    if (!OneCycle(store, names.back())) return -1;
  }
  size_t next = 0;
  return MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (!OneCycle(store, names[next])) return false;
      if (++next == names.size()) next = 0;
    }
    return true;
  });
}

}  // namespace ipclock_bench
