// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock run` killed alone (kill -9 of ipclock, not of COMMAND): COMMAND
// must not run on unlocked. On flock it keeps the lock's descriptor, as
// under flock(1), and the next holder waits for it; elsewhere, and on flock
// with -o, COMMAND dies with ipclock (SIGKILL). The test process is a
// subreaper, so that the orphaned COMMAND becomes its child and its end
// can be waited for and told apart: killed by SIGKILL, or still running.

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cli_util.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

struct Killed {
  pid_t command = 0;  // COMMAND, now our child
};

// Starts `ipclock run --store DSN --key KEY EXTRA -- sh -c '...; exec sleep
// 60'`, waits until COMMAND runs, and kills ipclock alone.
Killed StartAndKillIpclock(const std::string& dsn, const std::string& key,
                           const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", "--store", dsn, "--key", key};
  args.insert(args.end(), extra.begin(), extra.end());
  std::string ready;
  const pid_t ipclock = StartCliHolder(args, &ready);
  Killed out;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFileOrEmpty(ready)), &out.command)) {
    fail_msg("no COMMAND pid in %s", ready.c_str());
  }
  kill(ipclock, SIGKILL);
  assert_int_equal(WaitChild(ipclock), 128 + SIGKILL);
  return out;
}

// Whether `pid`, our child, still runs (not yet ended, not a zombie).
bool StillRuns(pid_t pid) {
  int status;
  return waitpid(pid, &status, WNOHANG) == 0;
}

// A store where COMMAND dies with ipclock: it ends by SIGKILL, and then the
// next holder gets the lock.
void ExpectCommandDies(const std::string& name, const std::string& dsn,
                       const std::vector<std::string>& extra = {}) {
  const std::string key = UniqueResource("alone");
  const double start = NowSeconds();
  const Killed k = StartAndKillIpclock(dsn, key, extra);
  const int status = WaitPlain(k.command, 10);
  if (status != 128 + SIGKILL) {
    fail_msg("%s: COMMAND should die by SIGKILL with ipclock; it %s", name.c_str(),
             status < 0 ? "still ran after 10 s" : absl::StrCat("ended with ", status).c_str());
  }
  print_message("%s: COMMAND killed, %.3f s after ipclock was started\n", name.c_str(),
                NowSeconds() - start);
  const CliResult next =
      RunCli({"run", "-w", "30", "--store", dsn, "--key", key, "--", "true"}, 40);
  ExpectCode(next, 0, absl::StrCat(name, ": the next holder").c_str());
}

void test_local_stores_command_dies_with_ipclock(void** state) {
  (void)state;
  ExpectCommandDies("shm", absl::StrCat("shm://", UniqueShmName("alone")));
  ExpectCommandDies("semaphore", "semaphore");
  ExpectCommandDies("posix-semaphore", "posix-semaphore");
  // flock with -o: COMMAND has no lock descriptor to keep the lock with.
  ExpectCommandDies("flock -o", FreshStore(), {"-o"});
}

void test_server_stores_command_dies_with_ipclock(void** state) {
  (void)state;
  const std::vector<ServerDsn> servers =
      ServerDsnsInBuild({"IPCLOCK_TEST_REDIS", "IPCLOCK_TEST_POSTGRES", "IPCLOCK_TEST_MYSQL"});
  SkipWithoutServerDsns(servers);
  // A short lease: the next holder gets in once it runs out.
  for (const ServerDsn& server : servers) ExpectCommandDies(server.variable, server.dsn, {"--ttl", "3"});
}

void test_flock_command_keeps_the_lock(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const std::string key = UniqueResource("keeps");
  const Killed k = StartAndKillIpclock(store, key, {});
  // COMMAND runs on, and holds the lock: the next holder is kept out.
  for (int i = 0; i < 3; ++i) {
    if (!StillRuns(k.command)) fail_msg("COMMAND ended with ipclock");
    const CliResult r = RunCli({"run", "-n", "--store", store, "--key", key, "--", "true"});
    ExpectCode(r, 1, "a try while the old COMMAND runs");
  }
  kill(k.command, SIGTERM);
  assert_int_equal(WaitPlain(k.command), 128 + SIGTERM);
  // Free once it ended, and the next holder is told that the holder died.
  const CliResult r = RunCli({"run", "-n", "--store", store, "--key", key, "--", "sh", "-c",
                              "echo died=${IPCLOCK_PREVIOUS_OWNER_DIED:-0}"});
  ExpectCode(r, 0, "a try once the old COMMAND ended");
  ExpectContains(r.out, "died=1", "the holder's death told");
}

}  // namespace
}  // namespace ipclock_test

int main(void) {
  using namespace ipclock_test;
  // Orphans of the killed ipclock (its COMMAND) become ours.
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_local_stores_command_dies_with_ipclock),
      cmocka_unit_test(test_server_stores_command_dies_with_ipclock),
      cmocka_unit_test(test_flock_command_keeps_the_lock),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
