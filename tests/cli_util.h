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

// `argv` under strace, its calls of `syscalls` ("flock", "openat") written
// to `trace`, its children followed. Skips the test without strace (fails
// it under CI=true). LeakSanitizer cannot run under ptrace: the traced
// program's is turned off.
std::vector<std::string> UnderStrace(const std::string& syscalls, const std::string& trace,
                                     std::vector<std::string> argv);

// Runs a program to completion, capturing stdout and stderr.
CliResult RunProgram(std::vector<std::string> argv, double timeout = 30);
CliResult RunCli(std::vector<std::string> args, double timeout = 30);

// Fail the test, showing what the program printed.
void ExpectCode(const CliResult& r, int code, const char* what);
void ExpectContains(const std::string& text, absl::string_view needle, const char* what);
void ExpectLacks(const std::string& text, absl::string_view needle, const char* what);

// Starts `argv` in a session of its own (no controlling terminal); its
// command must create `ready` once it runs (and so once the lock is held).
pid_t StartHolder(const std::vector<std::string>& argv, const std::string& ready);

// A shell script that writes its pid to `ready` (whole, by a rename) and
// then runs `then`.
std::string ReadyScript(const std::string& ready, absl::string_view then);

// A holder running `ipclock run ARGS -- sh -c ReadyScript(READY, "exec
// sleep 60")`.
pid_t StartCliHolder(std::vector<std::string> args, std::string* ready_out = nullptr);

// Ends a holder and everything it started (its COMMAND's process group
// too, for holders of StartCliHolder). Returns its exit status.
int StopHolder(pid_t pid, int sig = SIGTERM);

// A server store's DSN as tools/test-servers exports it: the variable's
// name and its value.
struct ServerDsn {
  const char* variable;
  std::string dsn;
};

// Those of `variables` (IPCLOCK_TEST_REDIS, ...) that are set and whose
// store is in this build; a server running for a store left out of the
// build (tools/dev minimal) is no reason to use it.
std::vector<ServerDsn> ServerDsnsInBuild(std::vector<const char*> variables);

// Skips the current test when `dsns` is empty (fails it under CI=true,
// unless no server store is in this build at all).
void SkipWithoutServerDsns(const std::vector<ServerDsn>& dsns);

// Servers of the test's own, on 127.0.0.1 and a free port of the range
// tools/test-servers/ports.sh leaves to tests ($IPCLOCK_TEST_PORT_BASE+90
// to +98), for the tests that flush, restart or kill them or start them
// late; the shared servers of tools/test-servers must not be disturbed.
// Both die with the test process. Without the server binaries the current
// test is skipped (failed under CI=true).
class OwnServer {
 public:
  virtual ~OwnServer() = default;
  // Picks a port if none yet (nothing is started).
  int port();
  // Starts the server; fails the test if it does not answer in 20 s.
  void Start();
  // Stops it at once (SIGKILL for Redis, an immediate shutdown for
  // PostgreSQL): nothing is saved.
  virtual void Stop() = 0;
  void Restart() {
    Stop();
    Start();
  }
  // Start() unless it answers already.
  void EnsureStarted() {
    port();
    if (!Answers()) Start();
  }
  virtual std::string dsn() = 0;

 protected:
  virtual void Launch() = 0;
  virtual bool Answers() = 0;
  std::string dir_;
  int port_ = 0;
  int first_port_offset_ = 90;
};

class OwnRedis : public OwnServer {
 public:
  // The process's server (skips the test without redis-server).
  static OwnRedis& Get();
  ~OwnRedis() override { Stop(); }
  void Stop() override;
  std::string dsn() override;
  // redis-cli ARGS against it: its output, trimmed; fails on a non-zero exit.
  std::string Command(const std::vector<std::string>& args);

 private:
  OwnRedis() { first_port_offset_ = 94; }
  void Launch() override;
  bool Answers() override;
  pid_t pid_ = -1;
};

class OwnPostgres : public OwnServer {
 public:
  // The process's server (skips the test without the PostgreSQL server
  // binaries); its role `ipclock` logs in without a password.
  static OwnPostgres& Get();
  ~OwnPostgres() override { Stop(); }
  void Stop() override;
  std::string dsn() override;
  // psql -Atc SQL as `ipclock`: its output, trimmed; fails on an error.
  std::string Sql(const std::string& sql);

 private:
  OwnPostgres() { first_port_offset_ = 97; }
  void Launch() override;
  bool Answers() override;
  std::vector<std::string> AsOwner(std::vector<std::string> argv) const;
  std::string bindir_;
  bool running_ = false;
};

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_CLI_UTIL_H_
