// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/faults.h"

#include <mutex>

namespace ipclock {
namespace internal {

std::atomic<bool> g_any_fault_armed{false};

namespace {

struct Fault {
  int err = 0;
  int count = 0;
  int skip = 0;
  size_t short_bytes = 0;
};

std::mutex& FaultMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

Fault* Faults() {
  static Fault* faults = new Fault[static_cast<size_t>(FaultPoint::kCount)];
  return faults;
}

}  // namespace

int TakeFaultSlow(FaultPoint point, size_t* short_bytes) {
  std::lock_guard<std::mutex> guard(FaultMutex());
  Fault& f = Faults()[static_cast<size_t>(point)];
  if (f.count == 0) return 0;
  if (f.skip > 0) {
    --f.skip;
    return 0;
  }
  --f.count;
  if (f.err == 0) {
    if (short_bytes != nullptr) *short_bytes = f.short_bytes;
    return short_bytes != nullptr ? -1 : 0;
  }
  return f.err;
}

}  // namespace internal

void InjectFault(FaultPoint point, int err, int count, int skip, size_t short_bytes) {
  std::lock_guard<std::mutex> guard(internal::FaultMutex());
  internal::Fault& f = internal::Faults()[static_cast<size_t>(point)];
  f = internal::Fault{err, count, skip, short_bytes};
  internal::g_any_fault_armed.store(true, std::memory_order_relaxed);
}

void ClearFaults() {
  std::lock_guard<std::mutex> guard(internal::FaultMutex());
  for (size_t i = 0; i < static_cast<size_t>(FaultPoint::kCount); ++i) {
    internal::Faults()[i] = internal::Fault();
  }
  internal::g_any_fault_armed.store(false, std::memory_order_relaxed);
}

}  // namespace ipclock
