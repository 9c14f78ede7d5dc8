// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Running the ipclock CLI from the end-to-end suites: capture its output,
// start holders that keep a lock while a command sleeps. These fail the
// current CMocka test on trouble, so forked children must not use them.

#ifndef IPCLOCK_TESTS_CLI_UTIL_H_
#define IPCLOCK_TESTS_CLI_UTIL_H_

#include <sys/types.h>

#include <csignal>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ipclock_test {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
};

// The ipclock binary of this build; fails the test if there is none.
std::string Cli();

// A fresh file name in a scratch dir shared by the whole test process.
std::string ScratchFile(absl::string_view tag);

// A store in a fresh lock dir: "flock:///tmp/ipclock-test-XXXX".
std::string FreshStore(std::string* dir_out = nullptr);

// `args` with the ipclock binary in front.
std::vector<std::string> WithCli(std::vector<std::string> args);

// Runs a program to completion, capturing stdout and stderr.
CliResult RunProgram(std::vector<std::string> argv, double timeout = 30);
CliResult RunCli(std::vector<std::string> args, double timeout = 30);

// Fail the test, showing what the program printed.
void ExpectCode(const CliResult& r, int code, const char* what);
void ExpectContains(const std::string& text, absl::string_view needle, const char* what);

// Starts `argv` in its own process group; its command must create `ready`
// once it runs (and so once the lock is held).
pid_t StartHolder(const std::vector<std::string>& argv, const std::string& ready);

// A holder running `ipclock run ARGS -- sh -c ': > READY; exec sleep 60'`.
pid_t StartCliHolder(std::vector<std::string> args, std::string* ready_out = nullptr);

// Ends a holder and everything it started. Returns its exit status.
int StopHolder(pid_t pid, int sig = SIGTERM);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_CLI_UTIL_H_
