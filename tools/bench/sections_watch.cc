// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What a LockWatch costs while nothing happens: 100 held locks of one store
// watched with the default options, the process otherwise asleep, its CPU
// time (every thread, user and system) over a window. The local stores'
// probes run every 50 ms where the kernel gives no event, the remote ones
// every check interval (1 s) or on the server's word (then every 10 s as a
// safety net); the goal is under
// 0.1% of one CPU per 100 locks. Beside each store, the same process with
// no lock watched, measured in the same run: what the process costs by
// itself.

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store_factory.h"
#include "sections.h"

namespace ipclock_bench {

namespace {

constexpr int kLocks = 100;
constexpr const char* kUnit = "% of a CPU";

int64_t ProcessCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The process's CPU time over `window` while this thread sleeps, as a
// percentage of one CPU.
double IdleCpuPercent(absl::Duration window) {
  const int64_t cpu0 = ProcessCpuNanos();
  const absl::Time t0 = absl::Now();
  absl::SleepFor(window);
  const double wall = absl::ToDoubleNanoseconds(absl::Now() - t0);
  return 100.0 * static_cast<double>(ProcessCpuNanos() - cpu0) / wall;
}

// kLocks held locks of `dsn`, watched; the idle CPU percentage, or -1 with
// `*why` set.
double WatchedIdleCpu(const std::string& dsn, const std::string& tag, absl::Duration window,
                      std::string* why) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) {
    *why = std::string(store.status().message());
    return -1;
  }
  ipclock::LockWatch watch;
  std::vector<ipclock::WatchedLock> held;
  held.reserve(kLocks);
  for (int i = 0; i < kLocks; ++i) {
    absl::StatusOr<ipclock::Lock> lock =
        ipclock::Lock::Create(*store, absl::StrCat(tag, ".watch-idle-", i));
    if (!lock.ok()) {
      *why = std::string(lock.status().message());
      return -1;
    }
    absl::StatusOr<bool> got = lock->TryAcquire();
    if (!got.ok() || !*got) {
      *why = got.ok() ? "a lock was held by someone else" : std::string(got.status().message());
      return -1;
    }
    absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(*std::move(lock));
    if (!watched.ok()) {
      *why = std::string(watched.status().message());
      return -1;
    }
    held.push_back(*std::move(watched));
  }
  // The first checks (an interval after each Watch()) and the threads'
  // start-up are not idle.
  absl::SleepFor(absl::Milliseconds(1300));
  const double percent = IdleCpuPercent(window);
  for (ipclock::WatchedLock& w : held) w.Release().IgnoreError();
  return percent;
}

}  // namespace

void WatchIdleSection(const Settings& s, const Workspace& ws, Report* report) {
  std::fprintf(stderr, "bench: watch idle cost\n");
  // Ten check intervals: a store whose server tells of every loss is
  // checked once in them, as a safety net.
  const absl::Duration window = s.quick ? absl::Seconds(1) : absl::Seconds(10);
  const char* kAlone = "process asleep, no lock watched";
  report->Add("watch", kAlone, IdleCpuPercent(window), kUnit);
  struct Target {
    std::string name;
    std::string dsn;
  };
  std::vector<Target> targets = {
      {"flock", ws.flock_dsn},
      {"semaphore", "semaphore"},
      {"posix-semaphore", ws.posix_dsn},
      {"shm", ws.shm_dsn},
  };
  for (const char* env : {"IPCLOCK_TEST_REDIS", "IPCLOCK_TEST_POSTGRES",
                          "IPCLOCK_TEST_MEMCACHED", "IPCLOCK_TEST_ZOOKEEPER"}) {
    const char* dsn = std::getenv(env);
    if (dsn == nullptr || *dsn == '\0') {
      report->notes.push_back(absl::StrCat("watch idle row skipped: ", env, " is unset"));
      continue;
    }
    std::string with = dsn;
    // The remote stores' test DSNs carry no secret for their locks' records.
    if (std::string(env) != "IPCLOCK_TEST_POSTGRES") {
      with += with.find('?') == std::string::npos ? "?secret=none" : "&secret=none";
    }
    targets.push_back({std::string(dsn).substr(0, std::string(dsn).find(':')), with});
  }
  for (const Target& t : targets) {
    std::string why;
    Row& row = report->Add(
        "watch", absl::StrCat(t.name, ": ", kLocks, " held locks watched, idle CPU"),
        WatchedIdleCpu(t.dsn, ws.tag, window, &why), kUnit, why);
    row.goal = GoalKind::kValueAtMost;
    row.limit = 0.1;
  }
}

}  // namespace ipclock_bench
