// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fairness and priority. How long the unluckiest of N processes waits when
// each loops acquire, hold, release on one lock, beside the median wait and
// beside the kernel primitive the store is built on; a writer among readers
// that keep a shared lock taken; and the priority inversion on one CPU.

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "handoff.h"
#include "inversion.h"
#include "sections.h"

namespace ipclock_bench {

namespace {

constexpr char kUs[] = "µs";

struct Contestant {
  std::string label;  // "ipclock", "ipclock fair=true", "raw flock"...
  std::string dsn;    // empty: the raw primitive
  RawPrimitive raw = RawPrimitive::kFlock;
  // Declared fair: held to the goal on the longest wait.
  bool fair = false;
};

// Longest / median wait of 8 looping processes: at most this for a fair
// store (the goal of the fairness rows). With fewer processes the median is
// a hold or two, and one preemption of a holder by other work outweighs it.
constexpr double kFairSpread = 10;
constexpr int kFairSpreadProcesses = 8;

// `procs` processes looping as the fairness rows have them: hold for
// `s.fairness_hold_us`, release, acquire again at once, for
// `s.fairness_millis`.
ContentionShape FairnessShape(const Settings& s, int procs) {
  ContentionShape shape;
  shape.procs = procs;
  shape.millis = s.fairness_millis;
  shape.hold_us = s.fairness_hold_us;
  return shape;
}

void SpreadRows(const std::string& section, const Contestant& c, int procs,
                const Contention& r, Report* report) {
  const std::string prefix = absl::StrCat(procs, " processes, ", c.label, ": ");
  const std::string median = absl::StrCat(prefix, "median wait");
  report->Add(section, median, r.median_wait_us, kUs);
  Row& longest = report->Add(section, absl::StrCat(prefix, "longest wait"), r.worst_wait_us, kUs);
  const bool goal = c.fair && procs == kFairSpreadProcesses;
  Against(longest, *report, median, goal ? GoalKind::kRatioAtMost : GoalKind::kNone,
          kFairSpread);
  report->Add(section, absl::StrCat(prefix, "most acquisitions by others during one wait"),
              static_cast<double>(r.most_overtaken), "acquisitions");
}

// A writer among readers on flock: readers that overlap keep a shared lock
// taken for good unless the store queues them behind the writer.
void WriterAmongReaders(const Settings& s, const Workspace& ws, Report* report) {
  const std::string section = "fairness flock, one writer among readers";
  const ContentionShape shape = FairnessShape(s, 4);
  for (const char* suffix : {"", "?fair=true"}) {
    const Contention r = Contend(ws.flock_dsn + suffix, ws.tag + ".rw", shape,
                                 [](int index) { return index != 0; });
    const double writer =
        r.worst_wait_us_by_process.empty() ? -1 : r.worst_wait_us_by_process[0];
    report->Add(section,
                absl::StrCat("ipclock", suffix[0] ? " fair=true" : "",
                             ": the writer's longest wait (3 readers)"),
                writer, kUs);
  }
}

}  // namespace

void FairnessSection(const Settings& s, const Workspace& ws, Report* report) {
  std::fprintf(stderr, "bench: fairness\n");
  struct Target {
    const char* section;
    std::vector<Contestant> contestants;
  };
  const std::string posix_fair = ws.posix_dsn + "&fair=true";
  const Target targets[] = {
      {"shm",
       {{"ipclock", ws.shm_dsn},
        {"ipclock fair=true", ws.fair_shm_dsn, RawPrimitive::kFlock, true},
        {"raw robust mutex", "", RawPrimitive::kRobustMutex},
        {"raw PI robust mutex", "", RawPrimitive::kPiRobustMutex}}},
      {"flock",
       {{"ipclock", ws.flock_dsn},
        {"ipclock fair=true", ws.flock_dsn + "?fair=true", RawPrimitive::kFlock, true},
        {"raw flock", "", RawPrimitive::kFlock}}},
      {"semaphore",
       {{"ipclock (fair: the kernel's queue)", "semaphore", RawPrimitive::kFlock, true},
        {"raw semop, SEM_UNDO", "", RawPrimitive::kSemop}}},
      {"posix-semaphore",
       {{"ipclock", ws.posix_dsn},
        {"ipclock fair=true", posix_fair, RawPrimitive::kFlock, true},
        {"raw sem_wait+sem_post", "", RawPrimitive::kPosixSem}}},
  };
  for (const Target& t : targets) {
    const std::string section = absl::StrCat("fairness ", t.section);
    for (int procs : s.fair_processes) {
      const ContentionShape shape = FairnessShape(s, procs);
      for (const Contestant& c : t.contestants) {
        // Each run on a resource of its own: a posix-semaphore resource is
        // fair or not for good.
        const std::string resource = absl::StrCat(ws.tag, ".fair.", c.label.size(), ".", procs);
        const Contention r = c.dsn.empty() ? ContendRaw(c.raw, ws.dir, shape)
                                           : Contend(c.dsn, resource, shape);
        SpreadRows(section, c, procs, r, report);
      }
    }
  }
  report->notes.push_back(absl::StrCat(
      "fairness rows: each process loops acquire, hold (a sleep of ", s.fairness_hold_us,
      " µs), release, acquiring again at once, for ", s.fairness_millis,
      " ms; the ratio of a longest wait is to the median wait of the same run; in order, "
      "a wait lets each other process acquire about once (N-1 acquisitions)"));
  WriterAmongReaders(s, ws, report);
  report->notes.push_back(absl::StrCat(
      "writer among readers: the writer loops as the others do; a writer that never got the "
      "lock waited the whole run, ", s.fairness_millis, " ms"));
}

void InversionSection(const Settings& s, const Workspace& ws, Report* report) {
  std::fprintf(stderr, "bench: priority inversion\n");
  const std::string section = "priority inversion (one CPU, SCHED_FIFO)";
  const std::string why = InversionUnavailable();
  if (!why.empty()) {
    report->notes.push_back(absl::StrCat(section, ": skipped, ", why));
    return;
  }
  InversionTimes times;
  times.critical_section_us = 10000;
  times.hog_us = s.quick ? 100000 : 300000;
  const char* kCritical = "the holder's critical section";
  report->Add(section, kCritical, times.critical_section_us, kUs);
  report->Add(section, "the middle-priority hog", times.hog_us, kUs);
  struct Case {
    std::string label;
    std::string dsn;
    double goal;  // × the critical section; 0: none (the inversion shows)
  };
  const Case cases[] = {
      // The segment fair=true made: pi=true asks for the same mutexes.
      {"shm pi=true", absl::StrCat("shm://", ws.tag, ".fair?pi=true"), 2},
      {"shm (plain)", ws.shm_dsn, 0},
      {"flock", ws.flock_dsn, 0},
      {"semaphore", "semaphore", 0},
      {"posix-semaphore", ws.posix_dsn, 0},
  };
  for (const Case& c : cases) {
    const double waited = InversionWaitMicros(c.dsn, ws.tag + ".inversion", times);
    Row& row = report->Add(section, absl::StrCat("high-priority wait, ", c.label), waited, kUs);
    Against(row, *report, kCritical, c.goal > 0 ? GoalKind::kRatioAtMost : GoalKind::kNone,
            c.goal);
  }
}

}  // namespace ipclock_bench
