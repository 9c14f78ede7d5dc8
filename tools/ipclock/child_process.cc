// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "descriptors.h"
#include "exit_codes.h"
#include "ipclock/spi/deadline.h"
#include "terminal_text.h"

namespace ipclock_cli {

namespace {

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// While a stopped COMMAND's process group still has members after COMMAND
// itself ended, how often to look whether they are gone (those whose parent
// still runs are not our children: no SIGCHLD tells).
constexpr int kGroupPollMillis = 20;

int ShellStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return kExitSignalBase + WTERMSIG(wait_status);
  return kExitOsError;
}

// Whether this process has a controlling terminal: opening /dev/tty fails
// (ENXIO) exactly when it has none.
bool HasControllingTerminal() {
  const int fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  close(fd);
  return true;
}

bool TakeStopRequest(int fd) {
  uint64_t count = 0;
  return read(fd, &count, sizeof(count)) == static_cast<ssize_t>(sizeof(count));
}

int64_t NowMillis() { return ipclock::Deadline::NowNanos() / 1000000; }

}  // namespace

absl::StatusOr<std::unique_ptr<ChildRunner>> ChildRunner::Create(const sigset_t& child_mask) {
  std::unique_ptr<ChildRunner> runner(new ChildRunner());
  runner->child_mask_ = child_mask;
  // An ignored SIGCHLD (inherited across exec) makes the kernel reap the
  // child itself, and its status would be lost.
  signal(SIGCHLD, SIG_DFL);
  sigemptyset(&runner->waited_);
  sigaddset(&runner->waited_, SIGCHLD);
  for (int sig : kForwardedSignals) {
    // One that ipclock was told to ignore (nohup, a background job's
    // SIGINT) is not ours to pass on; the child inherits the same SIG_IGN.
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    sigaddset(&runner->waited_, sig);
  }
  if (sigprocmask(SIG_BLOCK, &runner->waited_, nullptr) != 0) {
    return absl::InternalError(absl::StrCat("ipclock: sigprocmask: ", strerror(errno)));
  }
  runner->signal_fd_ = signalfd(-1, &runner->waited_, SFD_CLOEXEC | SFD_NONBLOCK);
  if (runner->signal_fd_ < 0) {
    return absl::InternalError(absl::StrCat("ipclock: signalfd: ", strerror(errno)));
  }
  runner->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (runner->stop_fd_ < 0) {
    return absl::InternalError(absl::StrCat("ipclock: eventfd: ", strerror(errno)));
  }
  return runner;
}

ChildRunner::~ChildRunner() {
  if (signal_fd_ >= 0) close(signal_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

void ChildRunner::RequestStop() {
  const uint64_t one = 1;
  // Only EAGAIN can fail here (the counter is full): a stop is pending then.
  [[maybe_unused]] const ssize_t n = write(stop_fd_, &one, sizeof(one));
}

ChildResult ChildRunner::Run(const std::vector<std::string>& command,
                             absl::Duration kill_after,
                             const std::function<void(const StopPlan&)>& on_stop,
                             absl::Duration a_while,
                             const std::function<void()>& after_a_while) {
  ChildResult result;
  StopPlan plan;
  plan.own_group = !HasControllingTerminal();
  plan.kill_after = kill_after;
  if (plan.own_group) {
    // What COMMAND started and left behind becomes our child, not init's,
    // and is reaped below. A killed group's orphans would otherwise stay
    // zombies, members of the group as kill(-pgid, 0) sees it, for as long
    // as init takes to reap them: forever where init is a container's
    // first process that reaps only its own children (or is ipclock
    // itself), which made every stop wait out --kill-after and send a
    // SIGKILL to a group that had ended. Cleared in the child by fork().
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  }
  if (TakeStopRequest(stop_fd_)) {
    // Lost before COMMAND could start: it never does.
    result.stopped = true;
    if (on_stop) on_stop(plan);
    return result;
  }

  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  // Made before fork: the child of a threaded process should not allocate.
  const std::string shown = Printable(command[0]);
  std::vector<int> keep = inherited_;
  keep.insert(keep.end(), lock_fds_.begin(), lock_fds_.end());
  std::sort(keep.begin(), keep.end());
  const pid_t parent = getpid();

  fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    Say(absl::StrCat("fork: ", strerror(errno)));
    result.status = kExitOsError;
    return result;
  }
  if (pid == 0) {
    if (plan.own_group) setpgid(0, 0);
    KeepOnlyAcrossExec(keep.data(), static_cast<int>(keep.size()));
    if (die_with_parent_) {
      prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      // ipclock died before the request was in place: nothing else sends
      // the signal now.
      if (getppid() != parent) kill(getpid(), SIGKILL);
    }
    sigprocmask(SIG_SETMASK, &child_mask_, nullptr);
    execvp(argv[0], argv.data());
    const int err = errno;
    dprintf(STDERR_FILENO, "ipclock: cannot run %s: %s\n", shown.c_str(), strerror(err));
    _exit(err == ENOENT ? kExitNotFound : kExitCannotExecute);
  }
  // Both sides set the group, so that it exists before either goes on
  // (EACCES here means the child has already exec'd, after its own call).
  if (plan.own_group) setpgid(pid, pid);
  plan.target = plan.own_group ? -pid : pid;
  plan.started = true;
  result.started = true;
  if (on_started_) on_started_(pid);

  bool done = false;
  int64_t kill_at = -1;  // ms on the monotonic clock; -1: no stop under way
  // ms on the monotonic clock; -1: after_a_while was called, or is not set.
  int64_t a_while_at = after_a_while ? NowMillis() + absl::ToInt64Milliseconds(a_while) : -1;
  const int64_t every = tick_ ? std::max<int64_t>(1, absl::ToInt64Milliseconds(every_)) : -1;
  int64_t tick_at = tick_ ? NowMillis() + every : -1;  // ms on the monotonic clock
  for (;;) {
    if (a_while_at >= 0 && !done && NowMillis() >= a_while_at) {
      a_while_at = -1;
      after_a_while();
    }
    if (tick_at >= 0 && !done && NowMillis() >= tick_at) {
      tick_();
      tick_at = NowMillis() + every;
    }
    int timeout = -1;
    if (kill_at >= 0 && !result.killed) {
      timeout = static_cast<int>(std::max<int64_t>(0, kill_at - NowMillis()));
      if (done) timeout = std::min(timeout, kGroupPollMillis);
    }
    for (const int64_t at : {a_while_at, tick_at}) {
      if (at < 0 || done) continue;
      const int until = static_cast<int>(std::max<int64_t>(0, at - NowMillis()));
      timeout = timeout < 0 ? until : std::min(timeout, until);
    }
    struct pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int ready = poll(fds, 2, timeout);
    if (ready < 0 && errno != EINTR) {
      Say(absl::StrCat("poll: ", strerror(errno)));
      break;  // fall back to a plain wait below
    }
    if (ready > 0 && (fds[1].revents & POLLIN) != 0 && TakeStopRequest(stop_fd_) &&
        !result.stopped) {
      result.stopped = true;
      if (on_stop) on_stop(plan);
      if (!done) {
        if (kill_after <= absl::ZeroDuration()) {
          kill(plan.target, SIGKILL);
          result.killed = true;
        } else {
          kill(plan.target, SIGTERM);
          kill_at = NowMillis() + absl::ToInt64Milliseconds(kill_after);
        }
      }
    }
    if (ready > 0 && (fds[0].revents & POLLIN) != 0) {
      struct signalfd_siginfo info;
      while (read(signal_fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        const int sig = static_cast<int>(info.ssi_signo);
        if (sig == SIGCHLD) {
          // COMMAND, or an orphan of its group that we inherited as its
          // subreaper; signals of both may have merged into one.
          int status = 0;
          pid_t reaped;
          while ((reaped = waitpid(-1, &status, WNOHANG)) > 0) {
            if (reaped != pid || done) continue;
            done = true;
            result.status = ShellStatus(status);
            result.signaled = WIFSIGNALED(status);
          }
          continue;  // otherwise stopped or continued
        }
        // The terminal sends ^C, ^\ and hangups to the whole foreground
        // process group, COMMAND included when it shares ours; passing them
        // on would deliver them twice.
        if (!plan.own_group && info.ssi_code == SI_KERNEL) continue;
        if (!done || plan.own_group) kill(plan.target, sig);
      }
    }
    if (kill_at >= 0 && !result.killed && NowMillis() >= kill_at) {
      // Still running, or members of its group are: what a lost lock
      // protected must not be touched any longer.
      if (!done || kill(plan.target, 0) == 0) {
        kill(plan.target, SIGKILL);
        result.killed = true;
      }
    }
    if (done) {
      // After a stop, what COMMAND started in its group gets the rest of
      // --kill-after to end too.
      const bool group_left = result.stopped && plan.own_group && !result.killed &&
                              kill_at >= 0 && kill(plan.target, 0) == 0;
      if (!group_left) return result;
    }
  }

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      Say(absl::StrCat("waitpid: ", strerror(errno)));
      result.status = kExitOsError;
      return result;
    }
  }
  result.status = ShellStatus(status);
  result.signaled = WIFSIGNALED(status);
  return result;
}

}  // namespace ipclock_cli
