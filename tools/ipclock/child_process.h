// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Running the command of `ipclock run` as a child process, passing signals
// on to it, and stopping it when asked from another thread (the watch of
// the locks, when one is lost).
//
// How the main thread waits. It sleeps in poll(2) on a signalfd, which
// delivers SIGCHLD and the signals passed on to COMMAND (all blocked, so no
// handler runs and none can slip by between fork and the wait), and on an
// eventfd that RequestStop() writes to. The watch's thread cannot call the
// main thread's code; one write(2) to the eventfd is all it does, which is
// safe from any thread and even from a signal handler, and needs no lock.
// The signals are blocked before any thread is started (Create()), so the
// watch's thread inherits the mask and the kernel can deliver them to the
// main thread's signalfd only.
//
// Process groups. Where ipclock has no controlling terminal (cron, systemd
// units, CI, `setsid`, ssh without -t), COMMAND is made the leader of a
// process group of its own, and a stop (SIGTERM, then SIGKILL) and the
// signals passed on reach everything it started that stayed in that group:
// the pipeline of `sh -c 'a | b'`, a shell script's children. Where ipclock
// has a controlling terminal, COMMAND stays in ipclock's process group,
// which the shell made a job: the terminal then sends ^C, ^\ and ^Z to
// COMMAND directly, and COMMAND may read the terminal (`ipclock run --
// vim`); a process group of its own would be a background job to the
// terminal, stopped by SIGTTIN when it reads and out of reach of ^C and of
// job control. There, a stop reaches COMMAND itself only.

#ifndef IPCLOCK_TOOLS_IPCLOCK_CHILD_PROCESS_H_
#define IPCLOCK_TOOLS_IPCLOCK_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ipclock_cli {

struct ChildResult {
  // COMMAND's exit status as a shell reports it: N for exit(N), 128+N for
  // death by signal N, 127 or 126 when it could not be executed.
  int status = 0;
  // COMMAND was started (a stop requested before it could be was not).
  bool started = false;
  // A stop was requested (COMMAND got SIGTERM, or was never started if the
  // request came first).
  bool stopped = false;
  // COMMAND (or what was left of its process group) needed SIGKILL.
  bool killed = false;
  // COMMAND was killed by a signal (`status` is 128+N).
  bool signaled = false;
};

struct StopPlan {
  // The pid or, negated, the process group the stop signals go to.
  pid_t target = 0;
  bool own_group = false;
  bool started = false;  // false: the stop came before COMMAND started
  absl::Duration kill_after;
};

class ChildRunner {
 public:
  // Blocks SIGCHLD and the signals passed on (SIGINT, SIGTERM, SIGHUP,
  // SIGQUIT, SIGUSR1, SIGUSR2, except those ipclock was told to ignore) in
  // the calling thread, and so in every thread started after it; call it
  // before any thread is started. They stay blocked after Run() returns, so
  // that one arriving late cannot kill ipclock before it has released its
  // locks. `child_mask` is the mask COMMAND starts with (ipclock's when it
  // started; the lock code may block signals of its own).
  static absl::StatusOr<std::unique_ptr<ChildRunner>> Create(const sigset_t& child_mask);

  ChildRunner(const ChildRunner&) = delete;
  ChildRunner& operator=(const ChildRunner&) = delete;
  ~ChildRunner();

  // Asks Run() to stop COMMAND: SIGTERM, then SIGKILL after `kill_after`.
  // Callable from any thread, any number of times; the first counts.
  void RequestStop();

  // Runs `command` (execvp: a PATH search, no shell) and waits for it to
  // end, passing signals on. On a stop request, calls `on_stop` on this
  // thread (to say what happens) before the first signal is sent; with a
  // `kill_after` of zero SIGKILL is sent at once. After a stop, whatever is
  // left of COMMAND's own process group gets until `kill_after` to end,
  // then SIGKILL.
  //
  // `after_a_while`, if set, is called once on this thread when COMMAND has
  // run for `a_while` and has not ended: `ipclock run` starts the watch of
  // its locks there, so that a command that ends at once pays for no
  // thread and no inotify instance (closing one waits for the kernel's
  // grace period, milliseconds).
  ChildResult Run(const std::vector<std::string>& command, absl::Duration kill_after,
                  const std::function<void(const StopPlan&)>& on_stop,
                  absl::Duration a_while = absl::ZeroDuration(),
                  const std::function<void()>& after_a_while = nullptr);

  // Called by Run() on its thread once COMMAND is forked (before it may
  // have exec'd), with its pid.
  void set_on_started(std::function<void(pid_t)> on_started) {
    on_started_ = std::move(on_started);
  }

  // What COMMAND inherits besides its standard streams (descriptors.h):
  // `inherited`, the descriptors ipclock was started with, and `locks`,
  // descriptors whose open files hold COMMAND's locks (flock), so that the
  // locks last while COMMAND runs even if ipclock is killed. Every other
  // descriptor is closed at exec. Both in increasing order.
  void set_descriptors(std::vector<int> inherited, std::vector<int> locks) {
    inherited_ = std::move(inherited);
    lock_fds_ = std::move(locks);
  }

  // COMMAND gets SIGKILL when ipclock dies (PR_SET_PDEATHSIG): the locks
  // go with ipclock, and the command they protect with them. The kernel
  // sends it when the thread that forked COMMAND ends, which is ipclock's
  // main thread, so only when ipclock ends; it does not reach what COMMAND
  // started, and an exec of a set-user-ID program (sudo) clears it.
  void set_die_with_parent(bool die) { die_with_parent_ = die; }

  // Called by Run() on its thread every `every` while COMMAND runs (the
  // thread wakes for it: `ipclock run` looks there for a loan of priority
  // to pass on, priority_lend.h).
  void set_every(absl::Duration every, std::function<void()> tick) {
    every_ = every;
    tick_ = std::move(tick);
  }

 private:
  ChildRunner() = default;

  sigset_t child_mask_;
  sigset_t waited_;
  int signal_fd_ = -1;
  int stop_fd_ = -1;
  std::function<void(pid_t)> on_started_;
  std::vector<int> inherited_;
  std::vector<int> lock_fds_;
  bool die_with_parent_ = false;
  absl::Duration every_;
  std::function<void()> tick_;
};

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_CHILD_PROCESS_H_
