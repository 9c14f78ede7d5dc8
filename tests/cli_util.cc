// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "cli_util.h"

#include <signal.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

std::string Cli() {
  static const std::string path = IpclockPath();
  if (path.empty()) fail_msg("ipclock binary not found (IPCLOCK_BUILD_ROOT unset?)");
  return path;
}

namespace {

// A scratch dir for captured output; each test makes its own lock dirs.
const std::string& ScratchDir() {
  static const std::string dir = MakeTempDir();
  return dir;
}

}  // namespace

std::string ScratchFile(absl::string_view tag) {
  static int counter = 0;
  return absl::StrCat(ScratchDir(), "/", tag, "-", counter++);
}

std::string FreshStore(std::string* dir_out) {
  std::string dir = MakeTempDir();
  if (dir_out != nullptr) *dir_out = dir;
  return absl::StrCat("flock://", dir);
}

std::vector<std::string> WithCli(std::vector<std::string> args) {
  args.insert(args.begin(), Cli());
  return args;
}

CliResult RunProgram(std::vector<std::string> argv, double timeout) {
  SpawnOptions options;
  options.stdout_path = ScratchFile("out");
  options.stderr_path = ScratchFile("err");
  CliResult r;
  const double start = NowSeconds();
  pid_t pid = Spawn(argv, options);
  r.code = WaitChild(pid, timeout);
  r.seconds = NowSeconds() - start;
  r.out = ReadFileOrEmpty(options.stdout_path);
  r.err = ReadFileOrEmpty(options.stderr_path);
  return r;
}

CliResult RunCli(std::vector<std::string> args, double timeout) {
  return RunProgram(WithCli(std::move(args)), timeout);
}

void ExpectCode(const CliResult& r, int code, const char* what) {
  if (r.code != code) {
    fail_msg("%s: exit %d, expected %d; stderr: %s", what, r.code, code, r.err.c_str());
  }
}

void ExpectContains(const std::string& text, absl::string_view needle, const char* what) {
  if (!absl::StrContains(text, needle)) {
    fail_msg("%s: \"%s\" not found in: %s", what, std::string(needle).c_str(),
             text.c_str());
  }
}

pid_t StartHolder(const std::vector<std::string>& argv, const std::string& ready) {
  SpawnOptions options;
  options.new_process_group = true;
  pid_t pid = Spawn(argv, options);
  if (!WaitForFile(ready, 20)) {
    kill(-pid, SIGKILL);
    WaitChild(pid);
    fail_msg("holder %s never started its command", argv[0].c_str());
  }
  return pid;
}

pid_t StartCliHolder(std::vector<std::string> args, std::string* ready_out) {
  const std::string ready = ScratchFile("ready");
  if (ready_out != nullptr) *ready_out = ready;
  args.insert(args.end(), {"--", "sh", "-c", absl::StrCat(": > '", ready, "'; exec sleep 60")});
  return StartHolder(WithCli(std::move(args)), ready);
}

int StopHolder(pid_t pid, int sig) {
  kill(-pid, sig);
  return WaitChild(pid);
}

}  // namespace ipclock_test
