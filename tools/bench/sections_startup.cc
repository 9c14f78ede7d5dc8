// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Start-up: what a whole program costs, from exec() to exit, beside the
// peer that does the same job. `ipclock run -- true` on the local stores
// beside util-linux flock(1); the minimal C program of tools/footprint
// (libipclock.a, the flock store) beside the same program without ipclock;
// and what a remote store's first lock adds: the dlopen() of its client
// library, counted and timed.

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "ipclock_config.h"
#include "sections.h"
#include "startup.h"

namespace ipclock_bench {

namespace {

constexpr char kSection[] = "start-up";
constexpr char kUs[] = "µs";

// What a program that takes a local lock must not map (as
// tests/client_library_test.cc checks while the command runs).
const char* const kHeavy[] = {
    "libhiredis", "libpq.",    "libmariadb", "libsqlite3", "libmemcached", "libzookeeper",
    "libkrb5",    "libgssapi", "libldap",    "libsasl2",   "libgnutls",    "libssl.",
    "libcrypto.", "libp11-kit"};

int HeavyMapped(const std::vector<std::string>& objects, std::vector<std::string>* names) {
  int n = 0;
  for (const std::string& o : objects) {
    const std::string base = o.substr(o.rfind('/') + 1);
    for (const char* h : kHeavy) {
      if (absl::StartsWith(base, h)) {
        ++n;
        names->push_back(base);
        break;
      }
    }
  }
  return n;
}

// Adds `label`'s wall and CPU rows, each against `peer`'s (ratio only when
// `goal` is 0).
void TimeRows(const std::map<std::string, ProcessTimes>& times, const std::string& label,
              const std::string& peer, double goal, Report* report) {
  const ProcessTimes& t = times.at(label);
  Row& wall = report->Add(kSection, absl::StrCat(label, ", wall"), t.wall_us, kUs);
  Row& cpu = report->Add(kSection, absl::StrCat(label, ", CPU"), t.cpu_us, kUs);
  if (peer.empty()) return;
  for (Row* row : {&wall, &cpu}) {
    const std::string floor =
        absl::StrCat(peer, row == &wall ? ", wall" : ", CPU");
    if (goal > 0) {
      Against(*row, *report, floor, GoalKind::kRatioAtMost, goal);
    } else {
      row->floor_figure = floor;
      row->floor = report->Value(kSection, floor);
    }
  }
}

// Peak RSS and shared objects of `label`; RSS against `peer`'s with `goal`.
void PeakRows(const std::string& label, const std::vector<std::string>& argv,
              const std::string& peer, double rss_goal, bool check_heavy, Report* report) {
  ProcessPeak p = PeakOf(argv);
  if (!p.ok) {
    report->notes.push_back(absl::StrCat(kSection, ": peak RSS of ", label,
                                         " not measured (ptrace refused, or it failed)"));
    return;
  }
  Row& rss = report->Add(kSection, absl::StrCat(label, ", peak RSS"), p.peak_rss_kib, "KiB");
  if (!peer.empty()) {
    const std::string floor = absl::StrCat(peer, ", peak RSS");
    if (rss_goal > 0) {
      Against(rss, *report, floor, GoalKind::kRatioAtMost, rss_goal);
    } else {
      rss.floor_figure = floor;
      rss.floor = report->Value(kSection, floor);
    }
  }
  std::vector<std::string> bases;
  for (const std::string& o : p.objects) bases.push_back(o.substr(o.rfind('/') + 1));
  Row& objects = report->Add(kSection, absl::StrCat(label, ", shared objects mapped"),
                             static_cast<double>(p.objects.size()), "objects");
  // The first few by name: a program linked against shared Abseil maps
  // dozens.
  constexpr size_t kNamed = 6;
  objects.note = absl::StrJoin(bases.begin(), bases.begin() + std::min(bases.size(), kNamed), " ");
  if (bases.size() > kNamed) absl::StrAppend(&objects.note, " and ", bases.size() - kNamed, " more");
  if (check_heavy) {
    std::vector<std::string> heavy;
    Row& row = report->Add(kSection,
                           absl::StrCat(label, ", client, Kerberos, LDAP or TLS libraries mapped"),
                           HeavyMapped(p.objects, &heavy), "objects");
    row.goal = GoalKind::kValueAtMost;
    row.limit = 0;
    row.note = absl::StrJoin(heavy, " ");
  }
}

// A lock dir as a service would have one: under /run/lock where this user
// may make one (flock(1)'s usual place, out of RemoveIPC's and tmp
// cleaners' reach), else the workspace's.
std::string StartupLockDir(const Workspace& ws) {
  const std::string dir = absl::StrCat("/run/lock/", ws.tag);
  if (mkdir(dir.c_str(), 0700) == 0) return dir;
  return ws.dir;
}

void RemoveDir(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') unlink(absl::StrCat(dir, "/", e->d_name).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

struct RemoteDsn {
  bool built;         // this build has the store
  const char* store;
  const char* env;    // the test server's DSN; nullptr: `dsn` as it is
  std::string dsn;
  const char* soname;
};

// Microseconds of one dlopen() of `soname` in a fresh process
// (dlopen_probe), or -1.
double DlopenMicros(const std::string& soname) {
  const std::string command = absl::StrCat(BENCH_DLOPEN_PROBE_PATH, " ", soname);
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[64] = {0};
  const bool read = std::fgets(buf, sizeof buf, p) != nullptr;
  const int status = pclose(p);
  double ns;
  if (!read || status != 0 || !absl::SimpleAtod(absl::StripAsciiWhitespace(buf), &ns)) return -1;
  return ns / 1000.0;
}

}  // namespace

void StartupSection(const Settings& s, const Workspace& ws, Report* report) {
  std::fprintf(stderr, "bench: start-up\n");
  if (std::string(BENCH_IPCLOCK_PATH).empty()) {
    report->notes.push_back("start-up rows skipped: this build has no ipclock command (-Dcli)");
    return;
  }
  const std::string dir = StartupLockDir(ws);
  const std::string cli = BENCH_IPCLOCK_PATH;
  const std::string flock1 = "flock(1) FILE true";
  const std::string ipclock_flock = "ipclock run --store flock://DIR --key k -- true";
  const std::string ipclock_shm = "ipclock run --store shm://NAME --key k -- true";
  const std::string ipclock_sem = "ipclock run --store semaphore --key k -- true";
  const std::string raw = "C program without ipclock (open, flock, close)";
  const std::string minimal = "the same with libipclock.a (flock store, C API)";
  const std::string minimal_static = "the same, Abseil, mbedTLS and C++ runtime static";
  const std::map<std::string, std::vector<std::string>> programs = {
      {flock1, {"flock", dir + "/flock1.lock", "true"}},
      {ipclock_flock, {cli, "run", "--store", "flock://" + dir, "--key", "k", "--", "true"}},
      {ipclock_shm, {cli, "run", "--store", "shm://" + ws.tag + ".startup", "--key", "k", "--",
                     "true"}},
      {ipclock_sem, {cli, "run", "--store", "semaphore", "--key", ws.tag + ".startup", "--",
                     "true"}},
      {raw, {BENCH_MINIMAL_RAW_PATH, dir}},
      {minimal, {BENCH_MINIMAL_PATH, dir}},
      {minimal_static, {BENCH_MINIMAL_STATIC_PATH, dir}},
  };
  report->notes.push_back(absl::StrCat(
      "start-up rows: each program run ", s.startup_runs, " times, in turn with the others; ",
      "the median. CPU is user + system, the `true` a program waits for included. Lock dir ",
      dir, ". The ipclock command is this build's (", BENCH_BUILD_TYPE, ")"));
  const std::map<std::string, ProcessTimes> times = TimePrograms(programs, s.startup_runs);

  TimeRows(times, flock1, "", 0, report);
  TimeRows(times, ipclock_flock, flock1, 1.5, report);
  TimeRows(times, ipclock_shm, flock1, 0, report);
  TimeRows(times, ipclock_sem, flock1, 0, report);
  PeakRows(flock1, programs.at(flock1), "", 0, false, report);
  PeakRows(ipclock_flock, programs.at(ipclock_flock), flock1, 2, true, report);

  TimeRows(times, raw, "", 0, report);
  TimeRows(times, minimal, raw, 0, report);
  TimeRows(times, minimal_static, raw, 0, report);
  PeakRows(raw, programs.at(raw), "", 0, false, report);
  PeakRows(minimal, programs.at(minimal), raw, 0, true, report);
  PeakRows(minimal_static, programs.at(minimal_static), raw, 0, true, report);

  // A remote store's first lock: one dlopen() (its client library, which
  // brings its own dependencies), counted by the dynamic loader
  // (LD_DEBUG=files) and timed alone in a fresh process.
  std::vector<RemoteDsn> remotes = {
      {IPCLOCK_HAVE_REDIS, "redis", "IPCLOCK_TEST_REDIS", "", IPCLOCK_HIREDIS_SONAME},
      {IPCLOCK_HAVE_POSTGRES, "postgresql+advisory", "IPCLOCK_TEST_POSTGRES", "",
       IPCLOCK_LIBPQ_SONAME},
      {IPCLOCK_HAVE_MYSQL, "mysql+advisory", "IPCLOCK_TEST_MYSQL", "", IPCLOCK_MARIADB_SONAME},
      {IPCLOCK_HAVE_SQLITE, "sqlite", nullptr, absl::StrCat("sqlite://", dir, "/startup.db"),
       IPCLOCK_SQLITE_SONAME},
      {IPCLOCK_HAVE_MEMCACHED, "memcached", "IPCLOCK_TEST_MEMCACHED", "",
       IPCLOCK_MEMCACHED_SONAME},
      {IPCLOCK_HAVE_ZOOKEEPER, "zookeeper", "IPCLOCK_TEST_ZOOKEEPER", "",
       IPCLOCK_ZOOKEEPER_SONAME},
  };
  for (RemoteDsn& r : remotes) {
    if (!r.built) continue;
    Row& cost = report->Add(kSection, absl::StrCat("dlopen(", r.soname, ") in a fresh process"),
                            DlopenMicros(r.soname), kUs);
    cost.note = absl::StrCat("what the first ", r.store, " store of a process adds");
    if (r.env != nullptr) {
      const char* v = std::getenv(r.env);
      if (v == nullptr || *v == '\0') {
        report->notes.push_back(absl::StrCat(kSection, ": ", r.store, " run skipped: ", r.env,
                                             " is unset"));
        continue;
      }
      r.dsn = v;
    }
    const std::vector<std::string> argv = {
        cli, "run", "--store", r.dsn, "--key", ws.tag + ".startup", "--", "true"};
    std::vector<std::string> loaded;
    Row& row = report->Add(kSection,
                           absl::StrCat("ipclock run --store ", r.store, ": dlopen() calls"),
                           DlopenedBy(argv, &loaded), "calls");
    row.goal = GoalKind::kValueAtMost;
    row.limit = 1;
    row.note = absl::StrJoin(loaded, " ");
    const std::string label = absl::StrCat("ipclock run --store ", r.store, " -- true");
    const std::map<std::string, ProcessTimes> t = TimePrograms({{label, argv}}, s.startup_runs / 4);
    TimeRows(t, label, ipclock_flock, 0, report);
  }
  if (dir != ws.dir) RemoveDir(dir);
}

}  // namespace ipclock_bench
