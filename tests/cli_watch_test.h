// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the source files of the CLI watch suite share: starting a watched
// `ipclock run`, waiting for its end and reading its loss report; and the
// tests that live in cli_watch_test_stop.cc, for cli_watch_test.cc's table.

#ifndef IPCLOCK_TESTS_CLI_WATCH_TEST_H_
#define IPCLOCK_TESTS_CLI_WATCH_TEST_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cli_util.h"

namespace ipclock_test {

inline constexpr int kLost = 79;
// Every run watches at this interval and gives COMMAND this long between
// SIGTERM and SIGKILL.
inline constexpr const char* kInterval = "0.1";
inline constexpr double kKillAfter = 2;
// From the loss to ipclock's exit: the interval, COMMAND's end on SIGTERM
// (at once for `sleep`; typically 10 ms in all), and ample room for a
// 2-core machine busy with other suites. A COMMAND that needs SIGKILL takes
// kKillAfter more.
inline constexpr double kBound = 10;

struct Run {
  pid_t pid = -1;      // ipclock
  pid_t command = -1;  // COMMAND, which leads its own process group
  std::string err_path;
};

// Starts `ipclock run ARGS --check-interval 0.1 --kill-after 2 -- sh -c
// SCRIPT` in a session of its own, SCRIPT running `setup`, writing its pid
// to a ready file and then running `then`; returns once COMMAND runs.
Run StartRun(std::vector<std::string> args, const std::string& then = "exec sleep 60",
             const std::string& setup = "", bool default_kill_after = false);

// Whether process group `pgid` still has a member (zombies aside).
bool GroupAlive(pid_t pgid);

bool ProcessAlive(pid_t pid);

void ExpectGone(pid_t pid, bool group, const char* what);

struct Ended {
  int code = -1;
  double seconds = 0;  // from the loss to ipclock's exit
  std::string err;
};

// Waits for `run` to end after a loss caused at `lost_at`, and checks that
// COMMAND (and its whole process group) is gone.
Ended WaitForEnd(const Run& run, double lost_at, double bound);

void ExpectNoControlBytes(const std::string& text, const char* what);

// The loss report: the store, the resource, one of `what` (what happened),
// the stop, and the exit status.
void ExpectLossReport(const Ended& e, absl::string_view store, absl::string_view resource,
                      const std::vector<absl::string_view>& what);

std::string FlockStoreIn(const std::string& dir);

// The one lock file in `dir`.
std::string LockFileIn(const std::string& dir);

// The suite's own servers, started on first use.
OwnRedis& Redis();
OwnPostgres& Postgres();

// The tests of cli_watch_test_stop.cc, in one declaration, for the suite's table.
void test_command_ignoring_sigterm_is_killed(void**), test_default_kill_after_is_one_second(void**),
    test_process_group_is_stopped(void**), test_group_that_ends_on_sigterm_needs_no_sigkill(void**),
    test_lost_by_release_fails_a_successful_run(void**),
    test_release_of_removed_set_fails_the_run(void**),
    test_release_of_deleted_redis_key_fails_the_run(void**),
    test_healthy_locks_report_nothing(void**), test_watch_options(void**),
    test_watch_starts_once_command_runs_a_while(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_CLI_WATCH_TEST_H_
