// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// End-to-end tests of `ipclock run` keeping what it holds: the real binary
// holds a real lock on every store while COMMAND runs, the lock is lost for
// real (the file, dir, segment, set or registry removed, the Redis key
// flushed or deleted, the server restarted, the database session
// terminated), and COMMAND must be stopped within the bound, with exit
// status 79 and a message naming the store, the resource and what
// happened. Also: a COMMAND that ignores SIGTERM is killed after
// --kill-after, what COMMAND started in its process group goes too (and a
// group that ends on SIGTERM is not waited out), a
// release that finds the lock gone fails a run that succeeded, and a long
// run of healthy locks reports nothing.
//
// ipclock runs in a session of its own (no controlling terminal), so that
// COMMAND leads its own process group in every run; the terminal case is in
// cli_test.cc. Redis and PostgreSQL are servers of the test's own
// (cli_util.h), since flushing or restarting the shared ones would break
// other suites.

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cli_util.h"
#include "ipclock_config.h"
#include "ipclock/stores/posix_semaphore_store.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

constexpr int kLost = 79;
// Every run watches at this interval and gives COMMAND this long between
// SIGTERM and SIGKILL.
constexpr const char* kInterval = "0.1";
constexpr double kKillAfter = 2;
// From the loss to ipclock's exit: the interval, COMMAND's end on SIGTERM
// (at once for `sleep`; typically 10 ms in all), and ample room for a
// 2-core machine busy with other suites. A COMMAND that needs SIGKILL takes
// kKillAfter more.
constexpr double kBound = 10;

struct Run {
  pid_t pid = -1;      // ipclock
  pid_t command = -1;  // COMMAND, which leads its own process group
  std::string err_path;
};

// Starts `ipclock run ARGS --check-interval 0.1 --kill-after 2 -- sh -c
// SCRIPT` in a session of its own, SCRIPT running `setup`, writing its pid
// to a ready file and then running `then`; returns once COMMAND runs.
Run StartRun(std::vector<std::string> args, const std::string& then = "exec sleep 60",
             const std::string& setup = "", bool default_kill_after = false) {
  const std::string ready = ScratchFile("ready");
  Run run;
  run.err_path = ScratchFile("err");
  SpawnOptions options;
  options.new_session = true;
  options.stderr_path = run.err_path;
  options.stdout_path = ScratchFile("out");
  args.insert(args.begin(), "run");
  args.insert(args.end(), {"--check-interval", kInterval});
  if (!default_kill_after) args.insert(args.end(), {"--kill-after", absl::StrCat(kKillAfter)});
  args.insert(args.end(), {"--", "sh", "-c", setup + ReadyScript(ready, then)});
  run.pid = Spawn(WithCli(args), options);
  if (!WaitForFile(ready, 30)) {
    kill(run.pid, SIGKILL);
    WaitChild(run.pid);
    fail_msg("ipclock run never started COMMAND; stderr: %s",
             ReadFileOrEmpty(run.err_path).c_str());
  }
  int command = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFileOrEmpty(ready)), &command)) {
    fail_msg("no pid in the ready file");
  }
  run.command = command;
  return run;
}

// Whether process group `pgid` still has a member (zombies aside).
bool GroupAlive(pid_t pgid) { return kill(-pgid, 0) == 0; }

bool ProcessAlive(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  // A zombie waiting for init to reap it runs nothing.
  const std::string stat = ReadFileOrEmpty(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

void ExpectGone(pid_t pid, bool group, const char* what) {
  const double until = NowSeconds() + 5;
  while (group ? GroupAlive(pid) : ProcessAlive(pid)) {
    if (NowSeconds() > until) {
      kill(group ? -pid : pid, SIGKILL);
      fail_msg("%s (%d) still runs after ipclock ended", what, pid);
    }
    usleep(10 * 1000);
  }
}

struct Ended {
  int code = -1;
  double seconds = 0;  // from the loss to ipclock's exit
  std::string err;
};

// Waits for `run` to end after a loss caused at `lost_at`, and checks that
// COMMAND (and its whole process group) is gone.
Ended WaitForEnd(const Run& run, double lost_at, double bound) {
  Ended e;
  e.code = WaitPlain(run.pid, bound - (NowSeconds() - lost_at));
  e.seconds = NowSeconds() - lost_at;
  e.err = ReadFileOrEmpty(run.err_path);
  if (e.code == -1) {
    // WaitPlain killed ipclock; COMMAND leads a group of its own.
    kill(-run.command, SIGKILL);
    fail_msg("COMMAND was not stopped within %.1f s of the loss; stderr: %s", bound,
             e.err.c_str());
  }
  print_message("ipclock ended %.3f s after the loss, exit %d\n", e.seconds, e.code);
  ExpectGone(run.command, /*group=*/true, "COMMAND's process group");
  return e;
}

void ExpectNoControlBytes(const std::string& text, const char* what) {
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n') || u == 0x7f) {
      fail_msg("%s: control byte 0x%02x on stderr: %s", what, u, text.c_str());
    }
  }
}

// The loss report: the store, the resource, one of `what` (what happened),
// the stop, and the exit status.
void ExpectLossReport(const Ended& e, absl::string_view store, absl::string_view resource,
                      const std::vector<absl::string_view>& what) {
  if (e.code != kLost) fail_msg("exit %d, expected %d; stderr: %s", e.code, kLost, e.err.c_str());
  ExpectContains(e.err, "lost a held lock: ", "the loss is reported");
  const std::string line = e.err.substr(e.err.find("lost a held lock: "));
  ExpectContains(line.substr(0, line.find('\n')), store, "the report names the store");
  ExpectContains(line.substr(0, line.find('\n')), absl::StrCat("\"", resource, "\""),
                 "the report names the resource");
  // What happened, said anywhere but in the resource's own name.
  const std::string after = absl::StrReplaceAll(line.substr(0, line.find('\n')),
                                                {{absl::StrCat("\"", resource, "\""), ""}});
  bool said = what.empty();
  for (absl::string_view w : what) said = said || absl::StrContains(after, w);
  if (!said) {
    std::string words;
    for (absl::string_view w : what) absl::StrAppend(&words, " '", w, "'");
    fail_msg("the report does not say what happened (one of%s): %s", words.c_str(),
             e.err.c_str());
  }
  ExpectContains(e.err, "stopping COMMAND: SIGTERM to its process group", "the stop is reported");
  ExpectContains(e.err, "exiting with status 79", "the exit is explained");
  ExpectNoControlBytes(e.err, "loss report");
}

std::string FlockStoreIn(const std::string& dir) {
  return absl::StrCat("flock://", dir, "?removeipc=ignore");
}

// The one lock file in `dir`.
std::string LockFileIn(const std::string& dir) {
  glob_t g;
  const std::string pattern = dir + "/sf.*.lock";
  if (glob(pattern.c_str(), 0, nullptr, &g) != 0 || g.gl_pathc != 1) {
    fail_msg("expected one lock file matching %s", pattern.c_str());
  }
  std::string path = g.gl_pathv[0];
  globfree(&g);
  return path;
}

// --- flock -------------------------------------------------------------------------

void test_flock_lock_file_deleted(void** state) {
  (void)state;
  const std::string dir = MakeTempDir();
  const std::string store = FlockStoreIn(dir);
  const Run run = StartRun({"--store", store, "--key", "k"});
  const double lost_at = NowSeconds();
  if (unlink(LockFileIn(dir).c_str()) != 0) fail_msg("unlink: %s", strerror(errno));
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "flock://", "k", {"deleted"});
}

void test_flock_lock_dir_removed(void** state) {
  (void)state;
  const std::string dir = MakeTempDir() + "/locks";
  const Run run = StartRun({"--store", FlockStoreIn(dir), "--key", "k"});
  const double lost_at = NowSeconds();
  ExpectCode(RunProgram({"rm", "-rf", dir}), 0, "rm -rf the lock dir");
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "flock://", "k", {"deleted", "removed"});
}

// The lock file stays linked, in a dir that is no longer the lock dir: the
// next run makes a new dir and a second lock of the same name.
void test_flock_lock_dir_renamed(void** state) {
  (void)state;
  const std::string parent = MakeTempDir();
  const std::string dir = parent + "/locks";
  const Run run = StartRun({"--store", FlockStoreIn(dir), "--key", "k"});
  const double lost_at = NowSeconds();
  if (rename(dir.c_str(), (parent + "/moved").c_str()) != 0) {
    fail_msg("rename: %s", strerror(errno));
  }
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "flock://", "k",
                   {"renamed", "moved", "replaced", "no longer"});
}

// --- shm, semaphore, posix-semaphore ---------------------------------------------

void test_shm_segment_removed(void** state) {
  (void)state;
  const std::string name = UniqueShmName("watch");
  const Run run = StartRun({"--store", absl::StrCat("shm://", name), "--key", "k"});
  const double lost_at = NowSeconds();
  // What systemd-logind's RemoveIPC does at logout.
  const std::string path = absl::StrCat("/dev/shm/ipclock.", name);
  if (unlink(path.c_str()) != 0) fail_msg("unlink %s: %s", path.c_str(), strerror(errno));
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "shm://", "k",
                   {"removed", "deleted", "unlinked"});
}

// The SysV set of `resource`, from `ipclock list`.
std::string SemaphoreSetId(const std::string& resource) {
  CliResult r = RunCli({"list", "--store", "semaphore", "--key", resource, "--json"});
  ExpectCode(r, 0, "list the set");
  const size_t at = r.out.find("\"semid\":");
  if (at == std::string::npos) fail_msg("no semid for %s: %s", resource.c_str(), r.out.c_str());
  const std::string rest = r.out.substr(at + 8);
  return rest.substr(0, rest.find_first_not_of("0123456789"));
}

void test_semaphore_set_removed(void** state) {
  (void)state;
  const std::string resource = UniqueResource("watch-sem");
  const Run run = StartRun({"--store", "semaphore", "--key", resource});
  const std::string semid = SemaphoreSetId(resource);
  const double lost_at = NowSeconds();
  ExpectCode(RunProgram({"ipcrm", "-s", semid}), 0, "ipcrm -s");
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "semaphore", resource,
                   {"removed", "deleted"});
}

void test_posix_semaphore_removed(void** state) {
  (void)state;
  const std::string resource = UniqueResource("watch-psem");
  const std::string prefix = absl::StrCat("iplw", getpid());
  const Run run = StartRun(
      {"--store", absl::StrCat("posix-semaphore:?prefix=", prefix), "--key", resource});
  // "/<prefix>.<hex>": the semaphore is /dev/shm/sem.<prefix>.<hex>, its
  // registry /dev/shm/<prefix>.<hex>.reg.
  const std::string name = ipclock::PosixSemaphoreName(resource, prefix).substr(1);
  const double lost_at = NowSeconds();
  for (const std::string& path :
       {absl::StrCat("/dev/shm/", name, ".reg"), absl::StrCat("/dev/shm/sem.", name)}) {
    if (unlink(path.c_str()) != 0) fail_msg("unlink %s: %s", path.c_str(), strerror(errno));
  }
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "posix-semaphore", resource,
                   {"removed", "deleted", "unlinked"});
}

// --- Redis -------------------------------------------------------------------------

OwnRedis& Redis() {
  OwnRedis& redis = OwnRedis::Get();
  redis.EnsureStarted();
  return redis;
}

void test_redis_flushall(void** state) {
  (void)state;
  OwnRedis& redis = Redis();
  const Run run = StartRun({"--store", redis.dsn(), "--key", "flush-me"});
  const double lost_at = NowSeconds();
  redis.Command({"FLUSHALL"});
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "redis://", "flush-me",
                   {"no longer", "deleted", "gone"});
}

void test_redis_key_deleted(void** state) {
  (void)state;
  OwnRedis& redis = Redis();
  redis.Command({"FLUSHALL"});
  const Run run = StartRun({"--store", redis.dsn(), "--key", "del-key"});
  const std::string keys = redis.Command({"KEYS", "*"});
  if (keys.empty()) fail_msg("no key on the server while the lock is held");
  const double lost_at = NowSeconds();
  for (absl::string_view key : absl::StrSplit(keys, '\n', absl::SkipEmpty())) {
    redis.Command({"DEL", std::string(key)});
  }
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "redis://", "del-key",
                   {"no longer", "deleted", "gone"});
}

// A restart without persistence forgets every key.
void test_redis_restart(void** state) {
  (void)state;
  OwnRedis& redis = Redis();
  const Run run = StartRun({"--store", redis.dsn(), "--key", "redis-bounced"});
  const double lost_at = NowSeconds();
  redis.Restart();
  ExpectLossReport(WaitForEnd(run, lost_at, kBound + 5), "redis://", "redis-bounced",
                   {"no longer", "deleted", "gone"});
}

// The lease runs out while the server does not answer: with --ttl 1 and
// renewals every third of it, a server stopped for 3 s lets the lease go.
void test_redis_lease_runs_out(void** state) {
  (void)state;
  OwnRedis& redis = Redis();
  const Run run = StartRun({"--store", redis.dsn() + "?command_timeout=0.2", "--ttl", "1",
                            "--key", "renewed"});
  // The server's pid, to stop it.
  const std::string info = redis.Command({"INFO", "server"});
  const size_t at = info.find("process_id:");
  int pid = 0;
  if (at == std::string::npos ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(info.substr(at + 11, info.find('\n', at) -
                                                                            at - 11)),
                        &pid)) {
    fail_msg("no process_id in INFO");
  }
  const double lost_at = NowSeconds();
  kill(pid, SIGSTOP);
  const Ended e = WaitForEnd(run, lost_at, kBound);
  kill(pid, SIGCONT);
  ExpectLossReport(e, "redis://", "renewed", {"lease"});
}

// --- PostgreSQL --------------------------------------------------------------------

OwnPostgres& Postgres() {
  OwnPostgres& pg = OwnPostgres::Get();
  pg.EnsureStarted();
  return pg;
}

void test_postgres_session_terminated(void** state) {
  (void)state;
  OwnPostgres& pg = Postgres();
  const Run run = StartRun({"--store", pg.dsn(), "--key", "pg-killed"});
  const double lost_at = NowSeconds();
  const std::string ended = pg.Sql(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_locks "
      "WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()");
  if (ended != "1") fail_msg("expected one session holding an advisory lock, ended %s",
                             ended.c_str());
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "postgres", "pg-killed",
                   {"session", "connection", "terminated", "closed"});
}

void test_postgres_restart(void** state) {
  (void)state;
  OwnPostgres& pg = Postgres();
  const Run run = StartRun({"--store", pg.dsn(), "--key", "pg-bounced"});
  const double lost_at = NowSeconds();
  pg.Restart();
  ExpectLossReport(WaitForEnd(run, lost_at, kBound + 10), "postgres", "pg-bounced",
                   {"session", "connection", "terminated", "closed"});
}

// --- How COMMAND is stopped --------------------------------------------------------

// A COMMAND that ignores SIGTERM (sh passes SIG_IGN on to its children) is
// killed --kill-after seconds after SIGTERM, not before.
void test_command_ignoring_sigterm_is_killed(void** state) {
  (void)state;
  const std::string dir = MakeTempDir();
  // Ignoring from before it says it runs, so that no SIGTERM can come first.
  const Run run = StartRun({"--store", FlockStoreIn(dir), "--key", "k"},
                           "while :; do sleep 0.05; done", "trap '' TERM; ");
  const double lost_at = NowSeconds();
  if (unlink(LockFileIn(dir).c_str()) != 0) fail_msg("unlink: %s", strerror(errno));
  const Ended e = WaitForEnd(run, lost_at, kBound + kKillAfter);
  ExpectLossReport(e, "flock://", "k", {"deleted"});
  ExpectContains(e.err, "after SIGKILL", "says SIGKILL was needed");
  if (e.seconds < kKillAfter) {
    fail_msg("killed %.2f s after the loss, before --kill-after %.1f", e.seconds, kKillAfter);
  }
}

// Without --kill-after, a COMMAND that ignores SIGTERM gets 1 s (the
// default, short because another holder may already have the lock): the
// stop message says so.
void test_default_kill_after_is_one_second(void** state) {
  (void)state;
  const std::string dir = MakeTempDir();
  const Run run = StartRun({"--store", FlockStoreIn(dir), "--key", "k"},
                           "while :; do sleep 0.05; done", "trap '' TERM; ",
                           /*default_kill_after=*/true);
  const double lost_at = NowSeconds();
  if (unlink(LockFileIn(dir).c_str()) != 0) fail_msg("unlink: %s", strerror(errno));
  const Ended e = WaitForEnd(run, lost_at, kBound + 1);
  ExpectLossReport(e, "flock://", "k", {"deleted"});
  ExpectContains(e.err, "SIGKILL in 1s if it has not ended", "names the default kill-after");
  ExpectContains(e.err, "after SIGKILL", "says SIGKILL was needed");
}

// What COMMAND started in its process group is stopped with it.
void test_process_group_is_stopped(void** state) {
  (void)state;
  const std::string dir = MakeTempDir();
  const std::string background = ScratchFile("bg");
  const Run run = StartRun({"--store", FlockStoreIn(dir), "--key", "k"},
                           absl::StrCat("sleep 60 & echo $! > '", background, "'; wait"));
  int bg = 0;
  const double until = NowSeconds() + 10;
  while (!absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFileOrEmpty(background)), &bg)) {
    if (NowSeconds() > until) fail_msg("no pid of the background job");
    usleep(5 * 1000);
  }
  const double lost_at = NowSeconds();
  if (unlink(LockFileIn(dir).c_str()) != 0) fail_msg("unlink: %s", strerror(errno));
  ExpectLossReport(WaitForEnd(run, lost_at, kBound), "flock://", "k", {"deleted"});
  ExpectGone(bg, /*group=*/false, "COMMAND's background job");
}

// A group whose members all end on SIGTERM ends the run at once, without
// waiting out --kill-after, even where init is slow to reap the orphans
// they leave (a container's first process that reaps only its own
// children): ipclock reaps them itself. This process stands in for such an
// init, a subreaper that reaps nothing until the run has ended.
void test_group_that_ends_on_sigterm_needs_no_sigkill(void** state) {
  (void)state;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    fail_msg("prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
  }
  const std::string dir = MakeTempDir();
  const Run run = StartRun({"--store", FlockStoreIn(dir), "--key", "k"}, "sleep 60 & wait");
  const double lost_at = NowSeconds();
  if (unlink(LockFileIn(dir).c_str()) != 0) fail_msg("unlink: %s", strerror(errno));
  const Ended e = WaitForEnd(run, lost_at, kBound);
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  ExpectLossReport(e, "flock://", "k", {"deleted"});
  if (absl::StrContains(e.err, "after SIGKILL")) {
    fail_msg("a group that ended on SIGTERM was sent SIGKILL: %s", e.err.c_str());
  }
  if (e.seconds >= kKillAfter) {
    fail_msg("ended %.2f s after the loss: it waited out --kill-after %.1f", e.seconds,
             kKillAfter);
  }
}

// A lock found gone at release fails a run whose COMMAND succeeded. Here
// COMMAND deletes its own lock file and exits 0 at once; the watch or the
// release notices, whichever is first.
void test_lost_by_release_fails_a_successful_run(void** state) {
  (void)state;
  const std::string dir = MakeTempDir();
  CliResult r = RunCli({"run", "--store", FlockStoreIn(dir), "--key", "k", "--check-interval",
                        "3600", "--", "sh", "-c", absl::StrCat("rm ", dir, "/sf.k.*.lock")});
  ExpectCode(r, kLost, "COMMAND deleted its own lock file");
  ExpectContains(r.err, "deleted", "says what happened");
  ExpectContains(r.err, "exiting with status 79", "the exit is explained");
}

// The same where nothing but the release can notice: the watch looks once
// an hour, and a SysV set has nothing inotify could report.
void test_release_of_removed_set_fails_the_run(void** state) {
  (void)state;
  const std::string resource = UniqueResource("release-sem");
  const std::string script =
      absl::StrCat("id=$('", Cli(), "' list --store semaphore --key '", resource,
                   "' --json | sed -n 's/.*\"semid\":\\([0-9]*\\).*/\\1/p'); ipcrm -s \"$id\"");
  CliResult r = RunCli({"run", "--store", "semaphore", "--key", resource, "--check-interval",
                        "3600", "--", "sh", "-c", script});
  ExpectCode(r, kLost, "COMMAND removed its own set");
  ExpectContains(r.err, resource, "names the resource");
  ExpectContains(r.err, "exiting with status 79", "the exit is explained");
}

// The same on Redis: COMMAND deletes the key, and the release finds it gone.
void test_release_of_deleted_redis_key_fails_the_run(void** state) {
  (void)state;
  OwnRedis& redis = Redis();
  redis.Command({"FLUSHALL"});
  const std::string script =
      absl::StrCat("for k in $(redis-cli -h 127.0.0.1 -p ", redis.port(),
                   " KEYS '*'); do redis-cli -h 127.0.0.1 -p ", redis.port(), " DEL \"$k\"; done");
  CliResult r = RunCli({"run", "--store", redis.dsn(), "--key", "released", "--check-interval",
                        "3600", "--", "sh", "-c", script});
  ExpectCode(r, kLost, "COMMAND deleted its own key");
  ExpectContains(r.err, "released", "names the resource");
}

// --- No false alarm ----------------------------------------------------------------

// Healthy locks on every store, watched every 100 ms for 10 s (Redis with a
// 1 s lease, renewed every third of it): nothing is reported, every run
// exits 0.
void test_healthy_locks_report_nothing(void** state) {
  (void)state;
  struct Healthy {
    std::vector<std::string> args;
    pid_t pid = -1;
    std::string err;
  };
  std::vector<Healthy> runs(4);
  runs[0].args = {"--store", FlockStoreIn(MakeTempDir()), "--key", "healthy"};
  runs[1].args = {"--store", absl::StrCat("shm://", UniqueShmName("healthy")), "--key",
                  "healthy"};
  runs[2].args = {"--store", "semaphore", "--key", UniqueResource("healthy")};
  runs[3].args = {"--store", absl::StrCat("posix-semaphore:?prefix=iplh", getpid()), "--key",
                  UniqueResource("healthy")};
  if (IPCLOCK_HAVE_REDIS) {
    runs.emplace_back();
    runs.back().args = {"--store", Redis().dsn(), "--ttl", "1", "--key", "healthy"};
  }
  if (IPCLOCK_HAVE_POSTGRES) {
    runs.emplace_back();
    runs.back().args = {"--store", Postgres().dsn(), "--key", "healthy"};
  }
  for (Healthy& h : runs) {
    h.err = ScratchFile("err");
    SpawnOptions options;
    options.new_session = true;
    options.stderr_path = h.err;
    std::vector<std::string> argv = {"run"};
    argv.insert(argv.end(), h.args.begin(), h.args.end());
    argv.insert(argv.end(), {"--check-interval", kInterval, "--", "sleep", "10"});
    h.pid = Spawn(WithCli(argv), options);
  }
  for (Healthy& h : runs) {
    const int code = WaitChild(h.pid, 60);
    const std::string err = ReadFileOrEmpty(h.err);
    if (code != 0 || absl::StrContains(err, "lost") || absl::StrContains(err, "stopping")) {
      fail_msg("%s %s: exit %d; stderr: %s", h.args[0].c_str(), h.args[1].c_str(), code,
               err.c_str());
    }
  }
}

// --- Options -----------------------------------------------------------------------

void test_watch_options(void** state) {
  (void)state;
  const std::string store = FlockStoreIn(MakeTempDir());
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--ttl", "0"},
                                             {"--ttl", "-1"},
                                             {"--ttl", "soon"},
                                             {"--kill-after", "-1"},
                                             {"--kill-after", "nan"},
                                             {"--check-interval", "0"},
                                             {"--check-interval", "0.0001"}}) {
    std::vector<std::string> args = {"run", "--store", store, "--key", "k"};
    args.insert(args.end(), bad.begin(), bad.end());
    args.insert(args.end(), {"--", "true"});
    CliResult r = RunCli(args);
    if (r.code != 64) {
      fail_msg("%s %s: exit %d, expected 64; stderr: %s", bad[0].c_str(), bad[1].c_str(),
               r.code, r.err.c_str());
    }
    ExpectContains(r.err, bad[0], "names the option");
  }
  // On a store without leases --ttl is accepted, and said to change nothing.
  CliResult r = RunCli({"run", "--store", store, "--key", "k", "--ttl", "5", "--verbose",
                        "--kill-after", "0", "--check-interval", "0.5", "--", "true"});
  ExpectCode(r, 0, "--ttl on flock");
  ExpectContains(r.err, "--ttl has no effect", "--verbose says --ttl changes nothing");
  ExpectContains(r.err, "checked every 500ms", "--verbose says what is watched");
}

// A COMMAND that ends at once pays for no watch: on a store without leases
// the watch's thread and inotify instance start only once COMMAND has run
// for a while (closing an inotify instance waits for the kernel's grace
// period, milliseconds), and then they do. COMMAND counts ipclock's threads
// and inotify instances itself.
void test_watch_starts_once_command_runs_a_while(void** state) {
  (void)state;
  const std::string store = FlockStoreIn(MakeTempDir());
  auto count = [&](const char* first) {
    const std::string script = absl::StrCat(
        first, "; echo $(ls /proc/$PPID/task | wc -l) $(ls -l /proc/$PPID/fd | grep -c inotify)");
    CliResult r = RunCli({"run", "--store", store, "--key", "k", "--", "sh", "-c", script});
    ExpectCode(r, 0, "the counting COMMAND");
    return std::string(absl::StripAsciiWhitespace(r.out));
  };
  // At its start: the best of a few runs, since a loaded machine may take
  // longer than the wait to start sh (the watch is then already running).
  std::string at_start;
  for (int i = 0; i < 5 && at_start != "1 0"; ++i) at_start = count(":");
  if (at_start != "1 0") {
    fail_msg("threads and inotify instances of ipclock at COMMAND's start: %s, expected 1 0",
             at_start.c_str());
  }
  // Then the watch's thread and inotify instance; a sanitizer's runtime
  // may have started a thread of its own by then (ThreadSanitizer does).
  const std::string later = count("sleep 0.5");
  int threads = 0, inotify = 0;
  if (sscanf(later.c_str(), "%d %d", &threads, &inotify) != 2 || threads < 2 || inotify != 1) {
    fail_msg("threads and inotify instances of ipclock after 0.5 s: %s, expected 2 (or more) 1",
             later.c_str());
  }
}

}  // namespace
}  // namespace ipclock_test

int main(void) {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flock_lock_file_deleted),
      cmocka_unit_test(test_flock_lock_dir_removed),
      cmocka_unit_test(test_flock_lock_dir_renamed),
      cmocka_unit_test(test_shm_segment_removed),
      cmocka_unit_test(test_semaphore_set_removed),
      cmocka_unit_test(test_posix_semaphore_removed),
      cmocka_unit_test(test_redis_flushall),
      cmocka_unit_test(test_redis_key_deleted),
      cmocka_unit_test(test_redis_restart),
      cmocka_unit_test(test_redis_lease_runs_out),
      cmocka_unit_test(test_postgres_session_terminated),
      cmocka_unit_test(test_postgres_restart),
      cmocka_unit_test(test_command_ignoring_sigterm_is_killed),
      cmocka_unit_test(test_default_kill_after_is_one_second),
      cmocka_unit_test(test_process_group_is_stopped),
      cmocka_unit_test(test_group_that_ends_on_sigterm_needs_no_sigkill),
      cmocka_unit_test(test_lost_by_release_fails_a_successful_run),
      cmocka_unit_test(test_release_of_removed_set_fails_the_run),
      cmocka_unit_test(test_release_of_deleted_redis_key_fails_the_run),
      cmocka_unit_test(test_healthy_locks_report_nothing),
      cmocka_unit_test(test_watch_options),
      cmocka_unit_test(test_watch_starts_once_command_runs_a_while),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
