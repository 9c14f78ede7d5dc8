// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "spawn_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ipclock/spi/deadline.h"

namespace ipclock_test {

namespace {

double Now() { return static_cast<double>(ipclock::Deadline::NowNanos()) / 1e9; }

void Redirect(const std::string& path, int target) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || dup2(fd, target) < 0) _exit(126);
  close(fd);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

}  // namespace

pid_t FlushedFork() {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    abort();
  }
  return pid;
}

pid_t Spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = FlushedFork();
  if (pid != 0) return pid;
  if (options.die_with_test) prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (options.new_session) {
    setsid();
  } else if (options.new_process_group) {
    setpgid(0, 0);
  }
  // The test runner's signal mask and handlers are not the program's.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Nor are the signals it ignores: a runner started by nohup, or as a
  // non-interactive shell's background job, ignores SIGHUP, SIGINT and
  // SIGQUIT, an ignored signal stays ignored across exec, and there
  // `ipclock run` leaves it be (as nohup means it to): a test's kill()
  // would do nothing.
  for (int sig : {SIGHUP, SIGINT, SIGQUIT}) signal(sig, SIG_DFL);
  if (options.stdin_fd >= 0) {
    dup2(options.stdin_fd, STDIN_FILENO);
  } else {
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  }
  if (options.stdout_fd >= 0) dup2(options.stdout_fd, STDOUT_FILENO);
  if (!options.stdout_path.empty()) Redirect(options.stdout_path, STDOUT_FILENO);
  if (!options.stderr_path.empty()) Redirect(options.stderr_path, STDERR_FILENO);
  execvp(args[0], args.data());
  dprintf(STDERR_FILENO, "exec %s: %s\n", args[0], strerror(errno));
  _exit(127);
}

int WaitForExit(pid_t pid, double timeout_sec, bool* timed_out) {
  *timed_out = false;
  const double until = Now() + timeout_sec;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (r < 0 && errno != EINTR) return -1;
    if (Now() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      *timed_out = true;
      return -1;
    }
    usleep(1000);
  }
}

int WaitPlain(pid_t pid, double timeout_sec) {
  bool timed_out = false;
  return WaitForExit(pid, timeout_sec, &timed_out);
}

std::string IpclockPath() {
  if (const char* cli = getenv("IPCLOCK_CLI"); cli != nullptr && cli[0] != '\0') {
    return cli;
  }
  const char* root = getenv("IPCLOCK_BUILD_ROOT");
  if (root == nullptr) return "";
  for (const char* rel : {"/tools/ipclock", "/tools/ipclock/ipclock"}) {
    std::string path = absl::StrCat(root, rel);
    if (IsExecutableFile(path)) return path;
  }
  return "";
}

std::string FindInPath(const std::string& name) {
  const char* path = getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", name);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return "";
}

bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  return static_cast<bool>(out);
}

bool WaitForFile(const std::string& path, double timeout_sec) {
  const double until = Now() + timeout_sec;
  while (!FileExists(path)) {
    if (Now() > until) return false;
    usleep(2000);
  }
  return true;
}

}  // namespace ipclock_test
