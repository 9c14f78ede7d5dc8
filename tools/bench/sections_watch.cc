// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What a LockWatch costs while nothing happens: 100 held locks of one store
// watched with the default options, the process otherwise asleep, its CPU
// time (every thread, user and system) over a window. The local stores'
// probes run every 50 ms where the kernel gives no event, the remote ones
// every check interval (1 s) or on the server's word (then every 10 s as a
// safety net), memcached and the table stores every 100 ms (one request a
// round for all their locks); the goal is under 0.1% of one CPU per 100
// locks. For a store behind a server, the requests it sends a second too:
// the data segments its TCP sockets sent (TCP_INFO), one per request as
// small as a check's. Beside each store, the same process with no lock
// watched, measured in the same run: what the process costs by itself.

#include <dirent.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store_factory.h"
#include "ipclock_config.h"
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

// The data segments this process's TCP sockets have sent so far; -1 with
// none open.
int64_t TcpDataSegmentsSent() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int64_t sum = -1;
  while (const struct dirent* e = readdir(dir)) {
    const int fd = atoi(e->d_name);
    if (fd <= 2 || fd == dirfd(dir)) continue;
    struct tcp_info info = {};
    socklen_t len = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_data_segs_out) + sizeof info.tcpi_data_segs_out) {
      continue;
    }
    sum = (sum < 0 ? 0 : sum) + info.tcpi_data_segs_out;
  }
  closedir(dir);
  return sum;
}

struct Idle {
  double cpu_percent = -1;
  double requests_per_second = -1;  // -1: no TCP socket
};

// The process's CPU time over `window` while this thread sleeps, as a
// percentage of one CPU, and the requests its TCP sockets sent a second.
Idle MeasureIdle(absl::Duration window) {
  const int64_t cpu0 = ProcessCpuNanos();
  const int64_t sent0 = TcpDataSegmentsSent();
  const absl::Time t0 = absl::Now();
  absl::SleepFor(window);
  const double wall = absl::ToDoubleNanoseconds(absl::Now() - t0);
  Idle out;
  out.cpu_percent = 100.0 * static_cast<double>(ProcessCpuNanos() - cpu0) / wall;
  const int64_t sent1 = TcpDataSegmentsSent();
  if (sent0 >= 0 && sent1 >= sent0) {
    out.requests_per_second = static_cast<double>(sent1 - sent0) * 1e9 / wall;
  }
  return out;
}

double IdleCpuPercent(absl::Duration window) { return MeasureIdle(window).cpu_percent; }

// kLocks held locks of `dsn`, watched; the idle CPU percentage and
// requests a second, or a CPU percentage of -1 with `*why` set.
Idle WatchedIdle(const std::string& dsn, const std::string& tag, absl::Duration window,
                 std::string* why) {
  Idle failed;
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) {
    *why = std::string(store.status().message());
    return failed;
  }
  ipclock::LockWatch watch;
  std::vector<ipclock::WatchedLock> held;
  held.reserve(kLocks);
  for (int i = 0; i < kLocks; ++i) {
    absl::StatusOr<ipclock::Lock> lock =
        ipclock::Lock::Create(*store, absl::StrCat(tag, ".watch-idle-", i));
    if (!lock.ok()) {
      *why = std::string(lock.status().message());
      return failed;
    }
    absl::StatusOr<bool> got = lock->TryAcquire();
    if (!got.ok() || !*got) {
      *why = got.ok() ? "a lock was held by someone else" : std::string(got.status().message());
      return failed;
    }
    absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(*std::move(lock));
    if (!watched.ok()) {
      *why = std::string(watched.status().message());
      return failed;
    }
    held.push_back(*std::move(watched));
  }
  // The first checks (an interval after each Watch()) and the threads'
  // start-up are not idle.
  absl::SleepFor(absl::Milliseconds(1300));
  const Idle idle = MeasureIdle(window);
  for (ipclock::WatchedLock& w : held) w.Release().IgnoreError();
  return idle;
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
#if IPCLOCK_HAVE_SQLITE
  targets.push_back({"sqlite (table)", absl::StrCat("sqlite://", ws.dir, "/watch-idle.db")});
#endif
  for (const char* env : {"IPCLOCK_TEST_REDIS", "IPCLOCK_TEST_POSTGRES",
                          "IPCLOCK_TEST_MEMCACHED", "IPCLOCK_TEST_ZOOKEEPER",
                          "IPCLOCK_TEST_POSTGRES_TABLE", "IPCLOCK_TEST_MYSQL_TABLE"}) {
    const char* dsn = std::getenv(env);
    if (dsn == nullptr || *dsn == '\0') {
      report->notes.push_back(absl::StrCat("watch idle row skipped: ", env, " is unset"));
      continue;
    }
    std::string with = dsn;
    // The remote stores' test DSNs carry no secret for their locks' records
    // (the table stores' none at all).
    const std::string name(env);
    const bool table = absl::EndsWith(name, "_TABLE");
    if (name != "IPCLOCK_TEST_POSTGRES" && !table) {
      with += with.find('?') == std::string::npos ? "?secret=none" : "&secret=none";
    }
    targets.push_back({absl::StrCat(std::string(dsn).substr(0, std::string(dsn).find(':')),
                                    table ? " (table)" : ""),
                       with});
  }
  for (const Target& t : targets) {
    std::string why;
    const Idle idle = WatchedIdle(t.dsn, ws.tag, window, &why);
    Row& row = report->Add(
        "watch", absl::StrCat(t.name, ": ", kLocks, " held locks watched, idle CPU"),
        idle.cpu_percent, kUnit, why);
    row.goal = GoalKind::kValueAtMost;
    row.limit = 0.1;
    if (idle.requests_per_second >= 0) {
      report->Add("watch", absl::StrCat(t.name, ": ", kLocks, " held locks watched, requests"),
                  idle.requests_per_second, "/s");
    }
  }
}

}  // namespace ipclock_bench
