// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Uncontended costs of the local stores beside their floors and peers.

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost_peer.h"
#include "flock_watch.h"
#include "ipclock_rows.h"
#include "raw_peers.h"
#include "sections.h"
#include "symfony_peer.h"

namespace ipclock_bench {

namespace {

constexpr char kRawMutex[] = "raw robust mutex lock+unlock";
constexpr char kRawFlockPair[] = "raw flock(LOCK_EX|LOCK_NB)+flock(LOCK_UN)";
constexpr char kRawOpenFlock[] = "raw open+flock+close";
constexpr char kBoostMutex[] = "Boost named_mutex construct+lock+unlock";
constexpr char kSymfonyFlock[] = "Symfony FlockStore create+acquire+release";

void Progress(const char* what) { std::fprintf(stderr, "bench: %s\n", what); }

// Adds the reused-handle and full-cycle rows of `dsn` as "<label>" rows;
// returns false (with a note) if the store cannot be opened.
bool StoreRows(const Settings& s, const std::string& section,
               const std::string& dsn, const std::string& label,
               const std::string& resource, Report* report, Row** reused,
               Row** cycle) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(dsn);
  if (!store.ok()) {
    report->notes.push_back(absl::StrCat(section, ": ", dsn, " skipped: ",
                                         store.status().ToString()));
    return false;
  }
  double r = ReusedHandle(s.shape, *store, resource);
  *reused = &report->Add(section, absl::StrCat("ipclock reused handle acquire+release", label), r, kNs);
  double c = FullCycle(Scaled(s.shape, 4), *store, resource);
  *cycle = &report->Add(section, absl::StrCat("ipclock full cycle", label), c, kNs);
  return true;
}

// The reused handle of `dsn` and of `fair_dsn`, measured in turns (five
// each, the median kept), so that a burst of other work on the machine
// weighs on both alike: what fair=true costs a lock that nobody waits for.
void FairReusedRows(const Settings& s, const std::string& section, const std::string& dsn,
                    const std::string& fair_dsn, const std::string& resource, Report* report) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> plain = OpenStore(dsn);
  absl::StatusOr<std::shared_ptr<ipclock::Store>> fair = OpenStore(fair_dsn);
  if (!plain.ok() || !fair.ok()) {
    report->notes.push_back(absl::StrCat(section, ": ", fair_dsn, " skipped: ",
                                         (plain.ok() ? fair : plain).status().ToString()));
    return;
  }
  RunShape shape = s.shape;
  shape.repetitions = 3;
  std::vector<double> plain_ns, fair_ns;
  for (int turn = 0; turn < 5; ++turn) {
    plain_ns.push_back(ReusedHandle(shape, *plain, resource));
    // Another resource: a posix-semaphore resource is fair or not for good.
    fair_ns.push_back(ReusedHandle(shape, *fair, resource + ".fair"));
  }
  std::sort(plain_ns.begin(), plain_ns.end());
  std::sort(fair_ns.begin(), fair_ns.end());
  const std::string base = "ipclock reused handle acquire+release, in turns with fair=true";
  report->Add(section, base, plain_ns[2], kNs);
  Row& row = report->Add(section, "ipclock reused handle acquire+release (fair=true)",
                         fair_ns[2], kNs);
  Against(row, *report, base, GoalKind::kRatioAtMost, 1.2);
}

}  // namespace

void Against(Row& row, const Report& report, const std::string& floor_figure,
             GoalKind goal, double limit) {
  row.floor_figure = floor_figure;
  row.floor = report.Value(row.section, floor_figure);
  row.goal = goal;
  row.limit = limit;
}

// The price of one clock read, beside a store's reused-handle rows: a
// reused handle reads none per call but a coarse one (see the rows'
// notes in doc/performance.md).
void ClockRows(const Settings& s, const std::string& section, Report* report) {
  report->Add(section, "one clock read, CLOCK_MONOTONIC", ClockReadNs(s.shape, CLOCK_MONOTONIC),
              kNs);
  report->Add(section, "one clock read, CLOCK_MONOTONIC_COARSE",
              ClockReadNs(s.shape, CLOCK_MONOTONIC_COARSE), kNs);
}

void ShmSection(const Settings& s, const Workspace& ws, Report* report) {
  Progress("shm");
  report->Add("shm", kRawMutex, RawRobustMutexPair(s.shape), kNs);
  ClockRows(s, "shm", report);
#if BENCH_HAVE_BOOST
  report->Add("shm", kBoostMutex, BoostNamedMutexCycle(Scaled(s.shape, 4)), kNs);
  report->Add("shm", "Boost named_mutex kept, lock+unlock", BoostNamedMutexPair(s.shape), kNs);
#endif
  Row *reused, *cycle;
  if (!StoreRows(s, "shm", ws.shm_dsn, "", "bench", report, &reused, &cycle)) return;
  Against(*reused, *report, kRawMutex, GoalKind::kRatioAtMost, 1.3);
  cycle->goal = GoalKind::kValueAtMost;
  cycle->limit = 300;
  FairReusedRows(s, "shm", ws.shm_dsn, ws.fair_shm_dsn, "bench", report);
  // What the lock metrics (ipclock/metrics.h) cost: the rows above record
  // with the default, metrics=on; the same without them and with every
  // hold timed.
  Row *off_reused, *off_cycle, *every_reused, *every_cycle;
  if (StoreRows(s, "shm", ws.shm_dsn + "?metrics=off", " (metrics=off)", "bench", report,
                &off_reused, &off_cycle) &&
      StoreRows(s, "shm", ws.shm_dsn + "?metrics=every", " (metrics=every)", "bench", report,
                &every_reused, &every_cycle)) {
    Row& cost = report->Add("shm", "metrics=on's cost per reused acquire+release (on - off)",
                            reused->value - off_reused->value, kNs);
    cost.goal = GoalKind::kValueAtMost;
    cost.limit = 5;
    report->Add("shm", "metrics=every's cost per reused acquire+release (every - off)",
                every_reused->value - off_reused->value, kNs);
  }
  report->Add("shm", "lost lock reported by LockWatch after rm of its segment (inotify), p50",
              ShmRemovalNoticedMicros(ws.tag + ".watch", 20), "µs");
#if BENCH_HAVE_BOOST
  Row copy = *cycle;
  Row& vs = report->Add("shm", copy.figure, copy.value, kNs);
  Against(vs, *report, kBoostMutex, GoalKind::kFasterAtLeast, 50);
#endif
}

void FlockSection(const Settings& s, const Workspace& ws, Report* report) {
  Progress("flock (lock dir on tmpfs)");
  report->notes.push_back(absl::StrCat(
      "flock rows: lock dir ", ws.dir, " on tmpfs; on a disk filesystem the "
      "holder record's writes cost more"));
  report->Add("flock", kRawFlockPair, RawFlockPair(s.shape, ws.dir), kNs);
  report->Add("flock", kRawOpenFlock, RawOpenFlockClose(Scaled(s.shape, 4), ws.dir), kNs);
#if BENCH_HAVE_BOOST
  report->Add("flock", "Boost file_lock construct+lock+unlock (fcntl)",
              BoostFileLockCycle(Scaled(s.shape, 4), ws.dir), kNs);
  report->Add("flock", "Boost file_lock kept, lock+unlock (fcntl)",
              BoostFileLockPair(s.shape, ws.dir), kNs);
#endif
  const SymfonyFigures& php = SymfonyPeerOnce(ws.dir, s.shape);
  auto php_ns = [&](const char* key) {
    auto it = php.ns.find(key);
    return it == php.ns.end() ? -1.0 : it->second;
  };
  report->Add("flock", kSymfonyFlock, php_ns("flock_cycle_ns"), kNs);
  report->Add("flock", "Symfony FlockStore reused acquire+release", php_ns("flock_reused_ns"), kNs);
  for (const std::string& n : php.notes) report->notes.push_back(n);

  struct Variant {
    const char* dsn_suffix;
    const char* label;
  };
  for (Variant v : {Variant{"", " (record on)"}, Variant{"?record=false", " (record=false)"}}) {
    Row *reused, *cycle;
    if (!StoreRows(s, "flock", ws.flock_dsn + v.dsn_suffix, v.label, "bench",
                   report, &reused, &cycle)) {
      return;
    }
    // With the record on, the record is read and written through a mapped
    // page: no system call beyond the flock pair, but the record's own work.
    Against(*reused, *report, kRawFlockPair, GoalKind::kRatioAtMost,
            v.dsn_suffix[0] == '\0' ? 1.5 : 1.25);
    Against(*cycle, *report, kRawOpenFlock, GoalKind::kRatioAtMost, 1.25);
    Row copy = *cycle;
    Row& vs = report->Add("flock", copy.figure, copy.value, kNs);
    Against(vs, *report, kSymfonyFlock, GoalKind::kFasterAtLeast, 4);
    if (v.dsn_suffix[0] == '\0') {
      FairReusedRows(s, "flock", ws.flock_dsn, ws.flock_dsn + "?fair=true", "bench", report);
    }
  }

  // A held lock's file deleted, or its dir renamed: how soon a LockWatch
  // says so (inotify; its interval is a minute).
  const WatchLatency watch = FlockWatchLatency(ws.dir, s.quick ? 5 : 25);
  report->Add("flock", "watch: lock file deleted, reported after (p50)",
              watch.file_deleted_p50_us, "µs");
  report->Add("flock", "watch: lock dir renamed, reported after (p50)",
              watch.dir_renamed_p50_us, "µs");
  Row& worst = report->Add("flock", "watch: either, reported after (max)", watch.max_us, "µs");
  worst.goal = GoalKind::kValueAtMost;
  worst.limit = 1000000;  // the watch's default interval, 1 s: inotify must beat it

  Progress("semaphore (SysV)");
  const char* kRawSemop = "raw semop(-1)+semop(+1), SEM_UNDO";
  report->Add("semaphore", kRawSemop, RawSemopPair(s.shape), kNs);
  report->Add("semaphore", "Symfony SemaphoreStore create+acquire+release",
              php_ns("semaphore_cycle_ns"), kNs);
  report->Add("semaphore", "Symfony SemaphoreStore reused acquire+release",
              php_ns("semaphore_reused_ns"), kNs);
  Row *reused, *cycle;
  if (StoreRows(s, "semaphore", "semaphore", "", ws.tag + ".sysv", report, &reused, &cycle)) {
    Against(*reused, *report, kRawSemop, GoalKind::kRatioAtMost, 1.3);
    // No fair=true row: the semaphore store is fair with no option, and
    // fair=true takes the same path.
    Against(*cycle, *report, "Symfony SemaphoreStore create+acquire+release",
            GoalKind::kFasterAtLeast, 4);
  }
}

void SemaphoreSections(const Settings& s, const Workspace& ws, Report* report) {
  Progress("posix-semaphore");
  const char* kRawSem = "raw sem_wait+sem_post";
  report->Add("posix-semaphore", kRawSem, RawPosixSemPair(s.shape), kNs);
  ClockRows(s, "posix-semaphore", report);
#if BENCH_HAVE_BOOST
  report->Add("posix-semaphore", "Boost named_semaphore construct+wait+post",
              BoostNamedSemaphoreCycle(Scaled(s.shape, 4)), kNs);
  report->Add("posix-semaphore", "Boost named_semaphore kept, wait+post",
              BoostNamedSemaphorePair(s.shape), kNs);
#endif
  Row *reused, *cycle;
  if (!StoreRows(s, "posix-semaphore", ws.posix_dsn, "", "bench", report, &reused, &cycle)) {
    return;
  }
  Against(*reused, *report, kRawSem, GoalKind::kRatioAtMost, 4);
  FairReusedRows(s, "posix-semaphore", ws.posix_dsn, ws.posix_dsn + "&fair=true", "bench",
                 report);
#if BENCH_HAVE_BOOST
  Against(*cycle, *report, "Boost named_semaphore construct+wait+post",
          GoalKind::kFasterAtLeast, 4);
#endif
}

}  // namespace ipclock_bench
