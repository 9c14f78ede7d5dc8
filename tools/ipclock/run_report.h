// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What `ipclock run` tells systemd and the journal about its locks:
//
//   * to the service manager ($NOTIFY_SOCKET, sd_notify.h): STATUS= while
//     it waits ("waiting for "R" on S, held by pid N (comm, unit) since T"),
//     once it holds and COMMAND runs, and when a lock is lost;
//     EXTEND_TIMEOUT_USEC= every kKeepAliveEvery while it waits, with
//     --notify-wait, so that TimeoutStartSec= bounds the start and not the
//     queue; READY=1 once the locks are held and COMMAND started, with
//     --notify-ready;
//   * to stderr, where it is the journal or with --verbose: the events
//     waiting, acquired and owner-died, each with its store, resource and
//     fence (ipclock/diagnostics.h; lost ones are told by run_command.cc).
//
// Without $NOTIFY_SOCKET, a journal or --verbose, nothing here makes a
// system call or starts a thread.

#ifndef IPCLOCK_TOOLS_IPCLOCK_RUN_REPORT_H_
#define IPCLOCK_TOOLS_IPCLOCK_RUN_REPORT_H_

#include <sys/types.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "run_options.h"
#include "sd_notify.h"

namespace ipclock_cli {

// How often a waiting run extends the unit's start timeout, and by how much
// (three messages' worth, so that one late wake-up is not fatal).
inline constexpr absl::Duration kKeepAliveEvery = absl::Seconds(10);
inline constexpr absl::Duration kKeepAliveExtension = absl::Seconds(30);

// What a run waits for or holds, in its messages: the resource quoted, or
// for --limit "2 of 3 permits of "pool"".
std::string WhatText(const RunOptions& options, const ipclock::Lock& lock);

class RunReport {
 public:
  explicit RunReport(const RunOptions& options);
  RunReport(const RunReport&) = delete;
  RunReport& operator=(const RunReport&) = delete;
  // Stops the keep-alive thread if one runs.
  ~RunReport();

  // Whether anyone listens for the waiting event: worth a try before the
  // wait, to know whether there is a wait.
  bool WantsWaiting() const { return notify_.active() || journal_ || options_.verbose; }

  // `lock` was found held by another: says so, naming the holder where
  // the store can tell, and starts the keep-alive with --notify-wait.
  void Waiting(const ipclock::Lock& lock);
  // The wait is over (whatever its outcome): stops the keep-alive.
  void DoneWaiting();

  // `lock` is held, after `waited`.
  void Acquired(const ipclock::Lock& lock, absl::Duration waited);

  // All of `locks` are held (before they go to the watch).
  void Held(const std::vector<ipclock::Lock>& locks);
  // COMMAND runs as `pid`: STATUS=, and READY=1 with --notify-ready.
  void Running(pid_t pid);

  // The status line of a lost lock (`what` says which and how).
  void Lost(const std::string& what);

 private:
  void KeepAlive();
  std::string WaitingText(const ipclock::Lock& lock) const;

  const RunOptions& options_;
  ServiceNotifier& notify_;
  const bool journal_;
  std::string command_;  // COMMAND's name, for status lines
  std::string held_;     // what Held() saw, for Running()

  std::mutex mu_;
  std::condition_variable wake_;
  bool waiting_ = false;  // guarded by mu_
  std::string status_;    // guarded by mu_: the waiting STATUS= line
  const ipclock::Lock* waited_lock_ = nullptr;  // guarded by mu_
  std::thread keep_alive_;
};

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_RUN_REPORT_H_
