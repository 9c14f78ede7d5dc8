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
// other suites. How COMMAND is stopped, no false alarm and the options are
// in cli_watch_test_stop.cc, for length.

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
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
#include "cli_watch_test.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
Run StartRun(std::vector<std::string> args, const std::string& then,
             const std::string& setup, bool default_kill_after) {
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

OwnRedis& Redis() {
  OwnRedis& redis = OwnRedis::Get();
  redis.EnsureStarted();
  return redis;
}

OwnPostgres& Postgres() {
  OwnPostgres& pg = OwnPostgres::Get();
  pg.EnsureStarted();
  return pg;
}

namespace {

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

// `ipclock run` holding `key` on the suite's own Redis until `lose` takes
// the lock away: the run ends within `bound` of that, reporting the loss.
void ExpectRedisLossEndsRun(const std::string& key, const std::function<void(OwnRedis&)>& lose,
                            double bound = kBound) {
  OwnRedis& redis = Redis();
  const Run run = StartRun({"--store", redis.dsn(), "--key", key});
  const double lost_at = NowSeconds();
  lose(redis);
  ExpectLossReport(WaitForEnd(run, lost_at, bound), "redis://", key,
                   {"no longer", "deleted", "gone"});
}

void test_redis_flushall(void** state) {
  (void)state;
  ExpectRedisLossEndsRun("flush-me", [](OwnRedis& redis) { redis.Command({"FLUSHALL"}); });
}

void test_redis_key_deleted(void** state) {
  (void)state;
  Redis().Command({"FLUSHALL"});
  ExpectRedisLossEndsRun("del-key", [](OwnRedis& redis) {
    const std::string keys = redis.Command({"KEYS", "*"});
    if (keys.empty()) fail_msg("no key on the server while the lock is held");
    for (absl::string_view key : absl::StrSplit(keys, '\n', absl::SkipEmpty())) {
      redis.Command({"DEL", std::string(key)});
    }
  });
}

// A restart without persistence forgets every key.
void test_redis_restart(void** state) {
  (void)state;
  ExpectRedisLossEndsRun("redis-bounced", [](OwnRedis& redis) { redis.Restart(); }, kBound + 5);
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
