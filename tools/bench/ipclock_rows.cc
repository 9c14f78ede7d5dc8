// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock_rows.h"

#include <unistd.h>

#include <atomic>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ipclock/lock.h"
#include "ipclock/lock_factory.h"
#include "ipclock/lock_watch.h"
#include "ipclock/stores/shm_store.h"
#include "ipclock/store_factory.h"

namespace ipclock_bench {

absl::StatusOr<std::shared_ptr<ipclock::Store>> OpenStore(const std::string& dsn) {
  ipclock::StoreOptions options;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  return ipclock::StoreFromDsn(dsn, options);
}

std::string WithOption(const std::string& dsn, const std::string& option) {
  return absl::StrCat(dsn, absl::StrContains(dsn, "?") ? "&" : "?", option);
}

double ReusedHandle(const RunShape& shape, const std::shared_ptr<ipclock::Store>& store,
                    const std::string& resource, ipclock::LockMode mode) {
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource);
  if (!lock.ok()) return -1;
  return MedianNsPerOp(shape, [&](int64_t n) {
    const ipclock::LockMode held_as = mode;  // read once: passed in a register, like a constant
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<bool> got = lock->TryAcquire(held_as);
      if (!got.ok() || !*got) return false;
      if (!lock->Release().ok()) return false;
    }
    return true;
  });
}

Row* ReusedHandleRow(const RunShape& shape, const std::string& section, const std::string& dsn,
                     const std::string& figure, const std::string& resource, Report* report) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(dsn);
  if (!store.ok()) {
    report->notes.push_back(absl::StrCat(section, ": ", figure, " skipped: ",
                                         store.status().ToString()));
    return nullptr;
  }
  return &report->Add(section, figure, ReusedHandle(shape, *store, resource), kNs);
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

double ShmRemovalNoticedMicros(const std::string& prefix, int samples) {
  ipclock::LockWatch watch;
  std::vector<int64_t> took;
  for (int i = 0; i < samples; ++i) {
    const std::string name = absl::StrCat(prefix, ".", i);
    absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore("shm://" + name);
    if (!store.ok()) return -1;
    absl::StatusOr<ipclock::Lock> lock = ipclock::AcquireLock(*store, "bench", absl::Seconds(1));
    if (!lock.ok()) return -1;
    std::atomic<int64_t> lost_at{0};
    ipclock::WatchOptions options;
    options.check_interval = absl::Hours(1);
    options.diagnostics = [&lost_at](const ipclock::Diagnostic&) { lost_at = NowNs(); };
    absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(*std::move(lock), options);
    if (!watched.ok()) return -1;
    const int64_t removed = NowNs();
    if (!ipclock::RemoveShmSegment(name).ok()) return -1;
    while (lost_at.load() == 0 && NowNs() - removed < 5'000'000'000) usleep(100);
    if (lost_at.load() == 0) return -1;
    took.push_back(lost_at.load() - removed);
    watched->Release().IgnoreError();  // Aborted: it was lost
  }
  return Percentile(took, 50) / 1000.0;
}

}  // namespace ipclock_bench
