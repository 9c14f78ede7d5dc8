// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Priority inheritance for COMMAND, on stores whose locks inherit it (shm
// with `pi=true` or `fair=true`).
//
// The kernel lends a real-time waiter's priority to the thread that owns
// the lock's PI futex: here the thread of `ipclock run` that acquired it,
// which sleeps while COMMAND does the work. Lent to it alone, the priority
// helps nobody: COMMAND still waits behind whatever runs between the two
// priorities, and so does the waiter. A PriorityLender passes it on. While
// COMMAND runs, that thread looks at its own priority every kLookEvery
// (Look()); once a waiter has raised it, every thread of every process
// under ipclock (COMMAND, what it started, orphans it left to ipclock)
// that runs lower gets SCHED_FIFO at the lent priority, and gets its own
// policy back when the loan ends: the waiter gave up or got the lock, or
// Restore() at COMMAND's end.
//
// Caveats handled here:
//   * Only the owning thread is raised, so only it can look: any other
//     thread of ipclock may be starved by the very work that keeps the
//     waiter waiting. It sleeps between looks, and wakes raised.
//   * A look is one read of /proc/thread-self/stat (its priority field is
//     the effective one, the loan included; sched_getparam() says the
//     thread's own). A loan takes effect within kLookEvery.
//   * Raising another process needs CAP_SYS_NICE or an RLIMIT_RTPRIO as
//     high as the lent priority: without, it is said once and no more is
//     tried. A thread already as high is left alone; one that changed its
//     policy while raised keeps what it chose.

#ifndef IPCLOCK_TOOLS_IPCLOCK_PRIORITY_LEND_H_
#define IPCLOCK_TOOLS_IPCLOCK_PRIORITY_LEND_H_

#include <sched.h>
#include <sys/types.h>

#include <map>

#include "absl/time/time.h"

namespace ipclock_cli {

class PriorityLender {
 public:
  static constexpr absl::Duration kLookEvery = absl::Milliseconds(10);

  // Made on the thread that holds the locks. Inactive (Look() and
  // Restore() do nothing) when `wanted` is false or /proc cannot be read.
  PriorityLender(bool wanted, bool verbose);
  ~PriorityLender();
  PriorityLender(const PriorityLender&) = delete;
  PriorityLender& operator=(const PriorityLender&) = delete;

  bool active() const { return stat_fd_ >= 0; }

  // On the thread that holds the locks, while COMMAND runs: passes a loan
  // of priority on to the processes under ipclock, changes it, or ends it.
  void Look();
  // Gives every thread raised here its own policy back (COMMAND ended).
  void Restore();

 private:
  struct Policy {
    int policy = SCHED_OTHER;  // with SCHED_RESET_ON_FORK, as the thread had it
    struct sched_param param = {};
  };
  struct Raised {
    Policy own;     // what it goes back to
    int given = 0;  // the SCHED_FIFO priority it was given
  };
  // The real-time priority lent to this thread now; 0 for none.
  int LentPriority() const;
  // Every thread under ipclock at `priority` (0: back to its own).
  void Apply(int priority);
  // False, said once, when the kernel refuses (`priority`: the loan).
  bool Set(pid_t tid, const Policy& to, int priority);

  const bool verbose_;
  int stat_fd_ = -1;
  bool refused_ = false;  // the kernel refused a loan: no more are tried
  Policy start_;          // ipclock's own, which COMMAND inherited
  int applied_ = 0;       // the loan in force below ipclock; 0 for none
  std::map<pid_t, Raised> raised_;
};

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_PRIORITY_LEND_H_
