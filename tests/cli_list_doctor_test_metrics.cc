// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list --format=openmetrics` and `--output`, the tests of
// cli_list_doctor_test.cc kept here for length: several stores in one
// exposition that promtool accepts, one series per lock whoever holds or
// waits, and a file that keeps a failed store's last good listing. Real
// holders and waiters: `ipclock run` processes, and forked children that
// hold two locks through the library.

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_split.h"
#include "cli_list_doctor_test.h"
#include "cli_util.h"
#include "ipclock/ipclock.h"
#include "ipclock/stores/posix_semaphore_store.h"
#include "ipclock/stores/semaphore_store.h"
#include "ipclock_config.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

// `promtool check metrics` accepts `text`; a failure under CI=true if
// promtool (Debian's prometheus) is missing, else a note.
void ExpectPromtoolAccepts(const std::string& text, const char* what) {
  const std::string promtool = FindInPath("promtool");
  if (promtool.empty()) {
    if (getenv("CI") != nullptr) fail_msg("promtool (Debian's prometheus) is not installed");
    fprintf(stderr, "no promtool: the text's syntax is not checked\n");
    return;
  }
  const std::string file = ScratchFile("metrics.prom");
  WriteFile(file, text);
  CliResult check =
      RunProgram({"sh", "-c", absl::StrCat(promtool, " check metrics < '", file, "'")});
  if (check.code != 0) {
    fail_msg("%s: promtool check metrics exited %d: %s%s\n%s", what, check.code,
             check.out.c_str(), check.err.c_str(), text.c_str());
  }
}

// Runs `ipclock list ARGS --format=openmetrics` until every one of
// `needles` is in its output (waiters queue a moment after they start).
std::string MetricsUntil(std::vector<std::string> args, const std::vector<std::string>& needles) {
  args.insert(args.begin(), "list");
  args.push_back("--format=openmetrics");
  CliResult r;
  const double give_up = NowSeconds() + 20;
  for (;;) {
    r = RunCli(args);
    ExpectCode(r, 0, "list --format=openmetrics");
    bool all = true;
    for (const std::string& n : needles) all = all && absl::StrContains(r.out, n);
    if (all) return r.out;
    if (NowSeconds() > give_up) break;
    usleep(20 * 1000);
  }
  fail_msg("list never showed all of what was expected; last output:\n%s", r.out.c_str());
  return r.out;
}

// The lines of `text` that start with `prefix`.
std::vector<std::string> LinesStarting(const std::string& text, absl::string_view prefix) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, prefix)) out.emplace_back(line);
  }
  return out;
}

void ExpectOneLine(const std::string& text, absl::string_view prefix, absl::string_view line,
                   const char* what) {
  const std::vector<std::string> lines = LinesStarting(text, prefix);
  if (lines.size() != 1 || lines[0] != line) {
    fail_msg("%s: expected the one line\n  %s\ngot %zu lines starting %s in:\n%s", what,
             std::string(line).c_str(), lines.size(), std::string(prefix).c_str(),
             text.c_str());
  }
}

// A child that holds `a` and `b` of `dsn` through the library, one process
// holding two locks, until `release` exists.
pid_t HoldTwoInOneProcess(const std::string& dsn, const std::string& a, const std::string& b,
                          const std::string& release) {
  const std::string held = ScratchFile("held-two");
  const pid_t child = ForkChild([=] {
    ipclock::StoreOptions options;
    options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
    absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn, options);
    if (!store.ok()) return 2;
    absl::StatusOr<ipclock::Lock> first = ipclock::AcquireLock(*store, a, absl::Seconds(10));
    absl::StatusOr<ipclock::Lock> second = ipclock::AcquireLock(*store, b, absl::Seconds(10));
    if (!first.ok() || !second.ok()) return 3;
    WriteFile(held, "1");
    WaitForFile(release, 60);
    return 0;
  });
  if (!WaitForFile(held)) fail_msg("the holder of two locks of %s did not start", dsn.c_str());
  return child;
}

std::vector<pid_t> StartWaiters(const std::string& dsn, const std::string& resource, int n) {
  SpawnOptions quiet;
  quiet.new_process_group = true;
  std::vector<pid_t> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(Spawn(
        WithCli({"run", "--store", dsn, "--key", resource, "-w", "60", "--", "true"}), quiet));
  }
  return out;
}

// The `lock` label of `resource` on the semaphore store: its SysV key.
std::string SysvLock(const std::string& resource) {
  absl::StatusOr<int32_t> key =
      ipclock::SemaphoreIpcKey(resource, ipclock::SemaphoreKeyScheme::kMd5);
  if (!key.ok()) fail_msg("SemaphoreIpcKey: %s", key.status().ToString().c_str());
  return absl::StrFormat("key 0x%08x", static_cast<uint32_t>(*key));
}

// On the posix-semaphore store of `prefix`: its registry.
std::string PosixLock(const std::string& resource, const std::string& prefix) {
  return absl::StrCat("/dev/shm", ipclock::PosixSemaphoreName(resource, prefix), ".reg");
}

}  // namespace

// One process holding two locks, and two locks with 3 waiters and 1: each
// lock is its own series, with its own counts, on both semaphore stores.
void test_list_metrics_one_series_per_semaphore_lock(void** state) {
  (void)state;
  const std::string prefix = absl::StrCat("iplm", getpid());
  const std::string posix = absl::StrCat("posix-semaphore:?prefix=", prefix);
  const std::string a = UniqueResource("om-a");
  const std::string b = UniqueResource("om-b");
  const std::string release = ScratchFile("release");
  const pid_t sysv_holder = HoldTwoInOneProcess("semaphore", a, b, release);
  const pid_t posix_holder = HoldTwoInOneProcess(posix, a, b, release);
  std::vector<pid_t> waiters = StartWaiters("semaphore", a, 3);
  for (pid_t w : StartWaiters("semaphore", b, 1)) waiters.push_back(w);
  for (pid_t w : StartWaiters(posix, a, 3)) waiters.push_back(w);
  for (pid_t w : StartWaiters(posix, b, 1)) waiters.push_back(w);

  const auto series = [](const std::string& family, const std::string& store,
                         const std::string& lock) {
    return absl::StrCat(family, "{store=\"", store, "\",lock=\"", lock, "\",resource=\"\"}");
  };
  std::vector<std::string> expected;
  for (const auto& [store, lock_a, lock_b] :
       {std::make_tuple(std::string("semaphore"), SysvLock(a), SysvLock(b)),
        std::make_tuple(posix, PosixLock(a, prefix), PosixLock(b, prefix))}) {
    expected.push_back(series("ipclock_lock_waiters", store, lock_a) + " 3");
    expected.push_back(series("ipclock_lock_waiters", store, lock_b) + " 1");
  }
  const std::string om = MetricsUntil({"--store", "semaphore", "--store", posix}, expected);
  for (const auto& [store, lock_a, lock_b, holder] :
       {std::make_tuple(std::string("semaphore"), SysvLock(a), SysvLock(b), sysv_holder),
        std::make_tuple(posix, PosixLock(a, prefix), PosixLock(b, prefix), posix_holder)}) {
    for (const std::string& lock : {lock_a, lock_b}) {
      const std::string s = series("ipclock_lock_holders", store, lock);
      ExpectOneLine(om, s, s + " 1", "one holder per lock");
      const std::string w = series("ipclock_lock_waiters", store, lock);
      ExpectOneLine(om, w, w + (lock == lock_a ? " 3" : " 1"), "the lock's own waiters");
      // Who holds is in the info gauge, not in the lock's series.
      const std::vector<std::string> info = LinesStarting(
          om, absl::StrCat("ipclock_lock_holder_info{store=\"", store, "\",lock=\"", lock,
                           "\",resource=\"\",mode=\"exclusive\",pid=\"", holder, "\","));
      if (info.size() != 1) fail_msg("holder %d of %s not named once:\n%s", holder, lock.c_str(), om.c_str());
      const std::string held = series("ipclock_lock_held_seconds", store, lock);
      if (LinesStarting(om, held).size() != 1) {
        fail_msg("no held time for %s:\n%s", lock.c_str(), om.c_str());
      }
    }
  }
  // The registry's waiters say since when they wait.
  if (LinesStarting(om, series("ipclock_lock_longest_wait_seconds", posix, PosixLock(a, prefix)))
          .size() != 1) {
    fail_msg("no longest wait for the posix-semaphore lock:\n%s", om.c_str());
  }
  ExpectPromtoolAccepts(om, "two semaphore stores");

  WriteFile(release, "1");
  assert_int_equal(WaitChild(sysv_holder), 0);
  assert_int_equal(WaitChild(posix_holder), 0);
  for (pid_t w : waiters) assert_int_equal(WaitChild(w), 0);
}

// Six stores in one file, written as node_exporter's textfile collector
// wants it (a foreign file named like a posix-semaphore registry left out);
// then one of them fails, and the file keeps its last good listing with
// its success gauge at 0, while the exit status says so.
void test_list_metrics_six_stores_and_a_failure(void** state) {
  (void)state;
  std::string dir;
  const std::string flock = FreshStore(&dir);
  const std::string shm = absl::StrCat("shm://", UniqueShmName("om"));
  const std::string prefix = absl::StrCat("iplo", getpid());
  const std::string posix = absl::StrCat("posix-semaphore:?prefix=", prefix);
  const std::string fifth =
      IPCLOCK_HAVE_SQLITE ? absl::StrCat("sqlite://", dir, "/locks.db") : FreshStore();
  // The store that fails: a lock dir that becomes a file.
  std::string failing_dir;
  const std::string failing = FreshStore(&failing_dir);
  const std::string r = UniqueResource("om-five");
  std::vector<std::string> stores = {flock, shm, "semaphore", posix, fifth, failing};
  std::vector<pid_t> holders;
  for (const std::string& store : stores) {
    holders.push_back(StartCliHolder({"run", "--store", store, "--key", r}));
  }
  std::vector<pid_t> waiters = StartWaiters(shm, r, 2);
  for (pid_t w : StartWaiters(flock, r, 1)) waiters.push_back(w);

  std::vector<std::string> args = {"list"};
  for (const std::string& store : stores) args.insert(args.end(), {"--store", store});
  // Waiters queue a moment after they start: until both are seen.
  const std::string shm_waiters =
      absl::StrCat("ipclock_lock_waiters{store=\"", shm, "\",lock=\"", r, "\",resource=\"", r,
                   "\"} 2");
  MetricsUntil(std::vector<std::string>(args.begin() + 1, args.end()), {shm_waiters});
  const std::string out_dir = MakeTempDir();
  const std::string file = absl::StrCat(out_dir, "/ipclock.prom");
  args.insert(args.end(), {"--format=openmetrics", "--output", file});
  // A file of another program (or ipclock version) named like a registry
  // fails nothing: it is left out, and said to be.
  const std::string planted =
      absl::StrCat("/dev/shm", ipclock::PosixSemaphoreName("planted", prefix), ".reg");
  WriteFile(planted, "an older registry");
  CliResult six = RunCli(args);
  unlink(planted.c_str());
  ExpectCode(six, 0, "list of six stores to a file");
  ExpectContains(six.err, "is not an ipclock registry", "says what was left out");
  const std::string good = ReadFileOrEmpty(file);
  for (const std::string& store : stores) {
    ExpectContains(good, absl::StrCat("ipclock_list_success{store=\"", store, "\"} 1"),
                   "each store listed");
    ExpectContains(good, absl::StrCat("ipclock_lock_holders{store=\"", store, "\",lock=\""),
                   "each store's lock");
  }
  ExpectContains(good, shm_waiters, "shm waiters, from their marks");
  ExpectContains(good, absl::StrCat("ipclock_lock_longest_wait_seconds{store=\"", shm, "\""),
                 "how long shm waiters have waited");
  ExpectContains(good, absl::StrCat("ipclock_lock_held_seconds{store=\"", shm, "\""),
                 "how long the shm lock has been held");
  ExpectPromtoolAccepts(good, "six stores");
  struct stat st;
  if (stat(file.c_str(), &st) != 0 || (st.st_mode & 0777) != 0644) {
    fail_msg("%s is not a 0644 file", file.c_str());
  }

  // One store fails: its lock dir is a file now (its holder loses the
  // lock; the listing cannot open the dir, a configuration fault).
  assert_int_equal(rename(failing_dir.c_str(), (failing_dir + ".away").c_str()), 0);
  WriteFile(failing_dir, "not a dir");
  CliResult failed = RunCli(args);
  // To stdout too, the failure is a gauge, never an empty text.
  CliResult to_stdout = RunCli({"list", "--store", failing, "--format=openmetrics"});
  ExpectCode(to_stdout, 64, "list of the failing store alone");
  ExpectContains(to_stdout.out,
                 absl::StrCat("ipclock_list_success{store=\"", failing, "\"} 0"),
                 "its gauge on stdout");
  ExpectCode(failed, 64, "list with one store failing");
  ExpectContains(failed.err, failing_dir, "says which dir");
  const std::string kept = ReadFileOrEmpty(file);
  ExpectContains(kept, absl::StrCat("ipclock_list_success{store=\"", failing, "\"} 0"),
                 "the failed store's gauge");
  ExpectContains(kept, absl::StrCat("ipclock_list_success{store=\"", flock, "\"} 1"),
                 "the others' gauges");
  // Its series are those of the last good listing, line for line.
  const std::string of_failing = absl::StrCat("{store=\"", failing, "\"");
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(good, '\n')) {
    if (!absl::StrContains(line, of_failing) || absl::StartsWith(line, "ipclock_list_success")) {
      continue;
    }
    ExpectContains(kept, absl::StrCat(line, "\n"), "a line of the last good listing");
    ++lines;
  }
  if (lines < 3) {
    fail_msg("only %zu lines of the failed store were kept:\n%s", lines, kept.c_str());
  }
  ExpectPromtoolAccepts(kept, "a file with a failed store");
  // Nothing left beside it.
  CliResult ls = RunProgram({"ls", "-A", out_dir});
  if (ls.out != "ipclock.prom\n") fail_msg("left in %s: %s", out_dir.c_str(), ls.out.c_str());

  for (pid_t h : holders) StopHolder(h);
  for (pid_t w : waiters) assert_int_equal(WaitChild(w), 0);
  unlink(failing_dir.c_str());
  RunProgram({"rm", "-rf", failing_dir + ".away"});
  // The killed commands' stores keep the deaths for the next holders.
  for (const std::string& store : {shm, std::string("semaphore"), posix}) {
    ExpectCode(RunCli({"run", "--store", store, "--key", r, "--", "true"}), 0, "a next holder");
  }
}

// The example unit's command runs as it is written (its ipclock and file
// aside) and writes a file that promtool accepts.
void test_list_metrics_example_unit(void** state) {
  (void)state;
  const char* source = getenv("IPCLOCK_SOURCE_ROOT");
  if (source == nullptr) skip();
  const std::string unit =
      ReadFileOrEmpty(absl::StrCat(source, "/doc/examples/ipclock-metrics.service"));
  const std::string joined = absl::StrReplaceAll(unit, {{"\\\n", " "}});
  std::string command;
  for (absl::string_view line : absl::StrSplit(joined, '\n')) {
    if (absl::ConsumePrefix(&line, "ExecStart=")) command = std::string(line);
  }
  const std::string file = absl::StrCat(MakeTempDir(), "/ipclock.prom");
  const std::string dir = "/var/lib/prometheus/node-exporter/ipclock.prom";
  if (!absl::StartsWith(command, "/usr/bin/ipclock list ") ||
      !absl::StrContains(command, dir)) {
    fail_msg("ExecStart= is not the command this test knows: %s", command.c_str());
  }
  command = absl::StrReplaceAll(command, {{"/usr/bin/ipclock", Cli()}, {dir, file}});
  // Its stores are this host's: whatever else is in them (a registry of
  // another ipclock version in /dev/shm, which is left out) fails none.
  CliResult r = RunProgram({"sh", "-c", command});
  ExpectCode(r, 0, "the example unit's command");
  const std::string text = ReadFileOrEmpty(file);
  ExpectContains(text, "ipclock_list_success{store=\"flock:///run/lock/app\"} 1",
                 "a store listed");
  ExpectPromtoolAccepts(text, "the example unit's file");
}

void test_list_metrics_usage(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::string file = ScratchFile("never.prom");
  ExpectCode(RunCli({"list", "--output"}), 64, "--output without a file");
  ExpectCode(RunCli({"list", "--output", ""}), 64, "--output of an empty name");
  CliResult twice =
      RunCli({"list", "--store", store, "--store", store, "--format=openmetrics", "--output", file});
  ExpectCode(twice, 64, "a store given twice");
  ExpectContains(twice.err, "given twice", "says why");
  ExpectCode(RunCli({"list", "--store", store, "--store", "in-memory", "--output", file}), 64,
             "a store that cannot be listed, among others");
  if (FileExists(file)) fail_msg("a usage error wrote %s", file.c_str());
  // A file that cannot be written: the listing's status is the file's.
  CliResult nowhere = RunCli({"list", "--store", store, "--output", "/nonexistent/dir/x.prom"});
  ExpectCode(nowhere, 71, "--output in a dir that does not exist");
  ExpectContains(nowhere.err, "/nonexistent/dir/x.prom", "names the file");
}

}  // namespace ipclock_test
