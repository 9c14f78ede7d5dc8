// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "child_process.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exit_codes.h"

namespace ipclock_cli {

namespace {

constexpr int kForwardedSignals[] = {SIGINT,  SIGTERM, SIGHUP,
                                     SIGQUIT, SIGUSR1, SIGUSR2};

int ShellStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return kExitSignalBase + WTERMSIG(wait_status);
  return kExitOsError;
}

}  // namespace

int RunChild(const std::vector<std::string>& command, const sigset_t& child_mask,
             absl::Duration tick_every, const std::function<void()>& tick) {
  // An ignored SIGCHLD (inherited across exec) makes the kernel reap the
  // child itself, and its status would be lost.
  signal(SIGCHLD, SIG_DFL);

  // Signals are taken synchronously with sigwaitinfo rather than in
  // handlers: blocked before fork, none can slip by between fork and the
  // wait, and forwarding needs no async-signal-safe trickery.
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  for (int sig : kForwardedSignals) {
    // One that ipclock was told to ignore (nohup, a background job's
    // SIGINT) is not ours to pass on; the child inherits the same SIG_IGN.
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
      continue;
    }
    sigaddset(&waited, sig);
  }
  sigprocmask(SIG_BLOCK, &waited, nullptr);

  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "ipclock: fork: %s\n", strerror(errno));
    return kExitOsError;
  }
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    execvp(argv[0], argv.data());
    const int err = errno;
    dprintf(STDERR_FILENO, "ipclock: cannot run %s: %s\n", argv[0], strerror(err));
    _exit(err == ENOENT ? kExitNotFound : kExitCannotExecute);
  }

  const bool ticking = tick != nullptr && tick_every != absl::InfiniteDuration();
  const struct timespec tick_timespec = absl::ToTimespec(tick_every);
  for (;;) {
    siginfo_t info;
    const int sig = ticking ? sigtimedwait(&waited, &info, &tick_timespec)
                            : sigwaitinfo(&waited, &info);
    if (sig < 0) {
      if (errno == EAGAIN) {
        tick();
        continue;
      }
      if (errno == EINTR) continue;
      fprintf(stderr, "ipclock: sigwaitinfo: %s\n", strerror(errno));
      break;  // fall back to a plain wait below
    }
    if (sig == SIGCHLD) {
      int status = 0;
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) return ShellStatus(status);
      continue;  // stopped or continued, or another child
    }
    // The terminal sends ^C, ^\ and hangups to the whole foreground process
    // group, the child included; passing them on would deliver them twice.
    if (info.si_code == SI_KERNEL) continue;
    kill(pid, sig);
  }

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      fprintf(stderr, "ipclock: waitpid: %s\n", strerror(errno));
      return kExitOsError;
    }
  }
  return ShellStatus(status);
}

}  // namespace ipclock_cli
