// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Running other programs from the CMocka suites: the ipclock CLI, flock(1),
// php. Nothing here calls CMocka, so forked children may use it too.

#ifndef IPCLOCK_TESTS_SPAWN_UTIL_H_
#define IPCLOCK_TESTS_SPAWN_UTIL_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace ipclock_test {

struct SpawnOptions {
  // Files for the child's stdout and stderr (created or truncated); empty
  // inherits the test's own.
  std::string stdout_path;
  std::string stderr_path;
  // Descriptors to use as stdin / stdout instead (e.g. pipe ends); -1 for
  // none. stdin is /dev/null otherwise.
  int stdin_fd = -1;
  int stdout_fd = -1;
  // Put the child in a process group of its own, so that kill(-pid, ...)
  // reaches it and everything it started.
  bool new_process_group = false;
  // Put the child in a session of its own (setsid): a process group of its
  // own, and no controlling terminal, as under cron or systemd.
  bool new_session = false;
  // Kill the child (SIGKILL) when the test process dies, however the test
  // ends: for servers of the test's own.
  bool die_with_test = false;
};

// fork(2) with stdout and stderr flushed first (so that the child does not
// print what the parent buffered); aborts if fork fails.
pid_t FlushedFork();

// fork + execvp. A child that cannot exec exits 127.
pid_t Spawn(const std::vector<std::string>& argv,
            const SpawnOptions& options = SpawnOptions());

// Waits for `pid` without CMocka: its exit code, 128+N for death by signal
// N, or -1: waitpid(2) failed (errno says why), or `*timed_out` is set:
// it was still running after `timeout_sec` and is killed.
int WaitForExit(pid_t pid, double timeout_sec, bool* timed_out);

// Waits for `pid` without CMocka: its exit code, 128+N for death by signal
// N, or -1 if it was still running after `timeout_sec` (it is then killed).
int WaitPlain(pid_t pid, double timeout_sec = 30);

// The ipclock binary of this build: $IPCLOCK_CLI, else under
// $IPCLOCK_BUILD_ROOT/tools. Empty if not found.
std::string IpclockPath();

// Searches $PATH like execvp; empty if `name` is not there.
std::string FindInPath(const std::string& name);

bool FileExists(const std::string& path);
std::string ReadFileOrEmpty(const std::string& path);
bool WriteFile(const std::string& path, const std::string& content);

// Polls for `path` to exist; false after `timeout_sec`.
bool WaitForFile(const std::string& path, double timeout_sec = 10);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_SPAWN_UTIL_H_
