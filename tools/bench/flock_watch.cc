// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "flock_watch.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "measure.h"

namespace ipclock_bench {

namespace {

// Nanoseconds from `lose()` to the watch's report, or -1.
double OneLoss(const std::string& dir, const std::function<void()>& lose) {
  ipclock::FlockStoreOptions options;
  options.dir = dir;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::NewFlockStore(options);
  if (!store.ok()) return -1;
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(*store, "watched");
  if (!lock.ok() || !lock->TryAcquire().value_or(false)) return -1;
  std::atomic<int64_t> reported{0};
  ipclock::WatchOptions watch_options;
  watch_options.check_interval = absl::Minutes(1);
  watch_options.diagnostics = [&](const ipclock::Diagnostic&) {
    reported.store(ipclock::Deadline::NowNanos());
  };
  ipclock::LockWatch watch;
  absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(*std::move(lock), watch_options);
  if (!watched.ok()) return -1;
  usleep(20 * 1000);  // the watch's thread is asleep in poll(2)
  const int64_t start = ipclock::Deadline::NowNanos();
  lose();
  for (int i = 0; i < 200000 && reported.load() == 0; ++i) usleep(10);
  const int64_t at = reported.load();
  watched->Release().IgnoreError();  // Aborted: it was lost
  return at == 0 ? -1 : static_cast<double>(at - start);
}

}  // namespace

WatchLatency FlockWatchLatency(const std::string& dir, int trials) {
  std::vector<int64_t> deleted, renamed;
  for (int i = 0; i < trials; ++i) {
    const std::string d = absl::StrCat(dir, "/watch-", i);
    const std::string file = absl::StrCat(d, "/", ipclock::FlockFileName("watched"));
    double ns = OneLoss(d, [&] { unlink(file.c_str()); });
    if (ns >= 0) deleted.push_back(static_cast<int64_t>(ns));
    ns = OneLoss(d, [&] { rename(d.c_str(), absl::StrCat(d, ".moved").c_str()); });
    if (ns >= 0) renamed.push_back(static_cast<int64_t>(ns));
    unlink(file.c_str());
    rmdir(d.c_str());
    unlink(absl::StrCat(d, ".moved/", ipclock::FlockFileName("watched")).c_str());
    rmdir(absl::StrCat(d, ".moved").c_str());
  }
  WatchLatency out;
  if (deleted.empty() || renamed.empty()) return out;
  out.max_us = static_cast<double>(std::max(*std::max_element(deleted.begin(), deleted.end()),
                                            *std::max_element(renamed.begin(), renamed.end()))) /
               1000.0;
  out.file_deleted_p50_us = Percentile(deleted, 50) / 1000.0;
  out.dir_renamed_p50_us = Percentile(renamed, 50) / 1000.0;
  return out;
}

}  // namespace ipclock_bench
