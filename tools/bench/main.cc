// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// bench: ipclock's costs beside the primitives they are built on and beside
// its peers (Boost.Interprocess, Symfony Lock), in one run on one machine,
// so that every ratio compares figures taken under the same conditions.
//
//   bench [--quick] [--out DIR] [--only SECTION]...
//
// SECTION is one of local (shm, flock, semaphores), remote, sql, cache-zk,
// etcd, handoff, scaling, fairness (and the priority inversion), memory,
// startup; without --only, every section runs.
//
// Writes bench.md (the table, also on stdout), bench.json, handoff.dat and
// handoff.png (with gnuplot) into DIR (default: the current dir). Remote
// stores are measured when IPCLOCK_TEST_REDIS / IPCLOCK_TEST_POSTGRES /
// IPCLOCK_TEST_MEMCACHED / IPCLOCK_TEST_ZOOKEEPER / IPCLOCK_TEST_ETCD name a
// server. Nothing is pinned but the priority-inversion case (one CPU,
// SCHED_FIFO, skipped with a note where that is refused): the machine's CPU
// and load are reported.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ipclock/stores/shm_store.h"
#include "ipclock_rows.h"
#include "machine.h"
#include "output.h"
#include "report.h"
#include "sections.h"

namespace {

void Usage() {
  std::fprintf(stderr, "usage: bench [--quick] [--out DIR] [--only SECTION]...\n");
  std::exit(64);
}

constexpr const char* kSections[] = {"local",    "remote",    "sql",     "cache-zk",
                                     "etcd",     "watch",     "handoff", "scaling",
                                     "fairness", "semaphore", "memory",  "startup"};

}  // namespace

int main(int argc, char** argv) {
  ipclock_bench::Settings settings;
  std::string out_dir = ".";
  std::set<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      settings = ipclock_bench::QuickSettings();
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_dir = argv[++i];
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc &&
               std::find(std::begin(kSections), std::end(kSections),
                         std::string(argv[i + 1])) != std::end(kSections)) {
      only.insert(argv[++i]);
    } else {
      Usage();
    }
  }
  auto run = [&](const char* section) { return only.empty() || only.count(section) != 0; };
  mkdir(out_dir.c_str(), 0755);

  ipclock_bench::Workspace ws;
  if (!ws.Create()) {
    std::fprintf(stderr, "bench: cannot create %s\n", ws.dir.c_str());
    return 1;
  }
  ipclock_bench::Report report;
  report.machine = ipclock_bench::DescribeMachine();
  std::fprintf(stderr, "bench: %s\n", report.machine.c_str());
  double load[1];
  if (getloadavg(load, 1) == 1 && load[0] > 1.0) {
    report.notes.push_back(
        "the 1-minute load average was above 1 at the start: other work shared "
        "the CPUs, so figures are noisy; rerun on a quiet machine");
  }

  // The local figures take seconds; a burst of other work on a shared
  // machine lasts as long. Several rounds, each figure the median of them,
  // keep one burst from deciding a figure or the floor beside it.
  if (run("local")) {
    std::vector<ipclock_bench::Report> rounds(settings.rounds);
    for (ipclock_bench::Report& round : rounds) {
      ipclock_bench::ShmSection(settings, ws, &round);
      ipclock_bench::FlockSection(settings, ws, &round);
      ipclock_bench::SemaphoreSections(settings, ws, &round);
    }
    report.AddMedianOf(rounds);
  }
  if (run("remote")) ipclock_bench::RemoteSections(settings, ws, &report);
  if (run("sql")) ipclock_bench::SqlSections(settings, ws, &report);
  if (run("cache-zk")) ipclock_bench::CacheAndZooKeeperSections(settings, ws, &report);
  if (run("etcd")) ipclock_bench::EtcdSection(settings, ws, &report);
  if (run("watch")) ipclock_bench::WatchIdleSection(settings, ws, &report);
  if (run("handoff")) ipclock_bench::HandoffSection(settings, ws, &report);
  // The memory section reads the segment the scaling section made.
  if (run("scaling")) ipclock_bench::ScalingSection(settings, ws, &report);
  if (run("fairness")) {
    ipclock_bench::FairnessSection(settings, ws, &report);
    ipclock_bench::InversionSection(settings, ws, &report);
  }
  if (run("semaphore")) ipclock_bench::CountingSemaphoreSection(settings, ws, &report);
  if (run("memory")) ipclock_bench::MemorySection(ws, BENCH_EXAMPLE_PATH, &report);
  if (run("startup")) ipclock_bench::StartupSection(settings, ws, &report);
  ws.Remove();

  report.machine = absl::StrCat(report.machine, "; load average at the end ",
                                ipclock_bench::LoadAverage());
  return ipclock_bench::WriteOutputs(report, out_dir) ? 0 : 1;
}
