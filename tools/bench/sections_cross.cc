// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Figures across processes and across sizes: handoff latency, contention,
// many resources, and memory.

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "handoff.h"
#include "ipclock_rows.h"
#include "raw_peers.h"
#include "scaling.h"
#include "sections.h"

namespace ipclock_bench {

namespace {

constexpr char kFutexP50[] = "raw futex handoff p50";

struct Candidate {
  std::string section;
  std::string dsn;
  double p50_goal;  // × the futex p50; 0 for none
};

void LatencyRows(const std::string& section, const std::string& what,
                 const Latency& l, Report* report) {
  report->Add(section, absl::StrCat(what, " p50"), l.p50_us, "µs");
  report->Add(section, absl::StrCat(what, " p99"), l.p99_us, "µs");
  report->Add(section, absl::StrCat(what, " max"), l.max_us, "µs");
}

}  // namespace

void HandoffSection(const Settings& s, const Workspace& ws, Report* report) {
  std::fprintf(stderr, "bench: handoff\n");
  const std::string section = "handoff";
  LatencyRows(section, "raw futex handoff", FutexHandoff(s.handoffs), report);
  const Candidate candidates[] = {
      {"shm", ws.shm_dsn, 2},
      {"flock", ws.flock_dsn, 3},
      {"flock record=false", ws.flock_dsn + "?record=false", 0},
      {"semaphore", "semaphore", 3},
      {"posix-semaphore", ws.posix_dsn, 0},
  };
  for (const Candidate& c : candidates) {
    Latency l = StoreHandoff(c.dsn, ws.tag + ".handoff", s.handoffs);
    std::string what = absl::StrCat("ipclock ", c.section);
    LatencyRows(section, what, l, report);
    Row& p50 = report->rows[report->rows.size() - 3];
    if (c.p50_goal > 0) {
      Against(p50, *report, kFutexP50, GoalKind::kRatioAtMost, c.p50_goal);
    }
    Row& p99 = report->rows[report->rows.size() - 2];
    p99.goal = GoalKind::kValueAtMost;
    p99.limit = 1000;
  }
}

void ScalingSection(const Settings& s, const Workspace& ws, Report* report) {
  std::fprintf(stderr, "bench: scaling\n");
  struct Target {
    std::string section;
    std::string dsn;
    int cap;  // most resources the store can hold at once; 0 for no limit
    double goal = 2;  // the most resources × the cost with one
    // For flock: the most resources × the kernel's own cost of opening,
    // locking and closing that many files in turn (0: no such row).
    double raw_goal = 0;
  };
  // A flock lock on a name not used before opens its file: the floor of a
  // sweep over many names is that open in a big dir, not the cached file of
  // one name. With the holder record, a first use also reads it and writes
  // it at acquisition and release (pread and two pwrites; the mapping pays
  // off only for files locked again).
  const Target targets[] = {
      {"shm", ws.big_shm_dsn, kBigShmResources, 1.5},
      {"flock", ws.flock_dsn, 0, 2, 2.5},
      {"flock record=false", ws.flock_dsn + "?record=false", 0, 2, 1.5},
  };
  const RunShape shape = Scaled(s.shape, 4);
  for (const Target& t : targets) {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(t.dsn);
    if (!store.ok()) continue;
    std::string first;
    for (int n : s.resources) {
      int count = t.cap > 0 && n > t.cap ? t.cap : n;
      std::string figure = absl::StrCat("full cycle over ", count, " resources");
      double ns = FullCycleOverResources(shape, *store,
                                         absl::StrCat(ws.tag, ".", t.section, ".", n, "."),
                                         count);
      Row& row = report->Add(absl::StrCat("scaling ", t.section), figure, ns, "ns/op");
      if (first.empty()) {
        first = figure;
      } else if (n == s.resources.back()) {
        Against(row, *report, first, GoalKind::kRatioAtMost, t.goal);
        if (count < n) row.note = absl::StrCat("capacity ", kBigShmCapacity, " of the segment");
        if (t.raw_goal > 0) {
          const std::string raw = absl::StrCat("raw open+flock+close over ", count, " files");
          report->Add(row.section, raw, RawOpenFlockCloseOver(shape, ws.dir, count), "ns/op");
          Row copy = row;
          Row& vs = report->Add(copy.section, copy.figure, copy.value, "ns/op");
          Against(vs, *report, raw, GoalKind::kRatioAtMost, t.raw_goal);
        }
      }
    }
  }
  struct Contended {
    const char* section;
    std::string dsn;
    RawPrimitive raw;
    const char* raw_name;
  };
  const Contended contended[] = {
      {"shm", ws.shm_dsn, RawPrimitive::kRobustMutex, "raw robust mutex"},
      {"flock", ws.flock_dsn, RawPrimitive::kFlock, "raw flock"},
      {"semaphore", "semaphore", RawPrimitive::kSemop, "raw semop, SEM_UNDO"},
      {"posix-semaphore", ws.posix_dsn, RawPrimitive::kPosixSem, "raw sem_wait+sem_post"},
  };
  for (const Contended& t : contended) {
    const std::string section = absl::StrCat("contention ", t.section);
    for (int procs : s.processes) {
      ContentionShape shape;
      shape.procs = procs;
      shape.millis = s.contention_millis;
      const Contention c = Contend(t.dsn, ws.tag + ".contend", shape);
      report->Add(section, absl::StrCat(procs, " processes: throughput"),
                  c.ops_per_sec, "acquire+release/s");
      report->Add(section, absl::StrCat(procs, " processes: worst wait"),
                  c.worst_wait_us, "µs");
      const Contention raw = ContendRaw(t.raw, ws.dir, shape);
      report->Add(section, absl::StrCat(procs, " processes: throughput, ", t.raw_name),
                  raw.ops_per_sec, "acquire+release/s");
      report->Add(section, absl::StrCat(procs, " processes: worst wait, ", t.raw_name),
                  raw.worst_wait_us, "µs");
    }
  }
}

void MemorySection(const Workspace& ws, const std::string& example, Report* report) {
  struct stat st;
  // The segment exists: the scaling section made it.
  if (stat(absl::StrCat("/dev/shm/ipclock.", ws.tag, ".big").c_str(), &st) == 0) {
    report->Add("memory", absl::StrCat("shm table bytes per resource (segment / capacity ",
                                       kBigShmCapacity, ")"),
                static_cast<double>(st.st_size) / kBigShmCapacity, "bytes");
  }
  const std::string stripped = absl::StrCat(ws.dir, "/example.stripped");
  std::string command = absl::StrCat("strip -o '", stripped, "' '", example, "'");
  if (std::system(command.c_str()) == 0 && stat(stripped.c_str(), &st) == 0) {
    Row& row = report->Add("memory", "stripped program using the flock and shm stores",
                           static_cast<double>(st.st_size) / 1024.0, "KiB");
    // Debian ships Abseil as shared libraries only.
    row.note = "Abseil and mbedTLS linked as shared libraries, not counted";
  } else {
    report->notes.push_back("memory: could not strip the example program");
  }
}

}  // namespace ipclock_bench
