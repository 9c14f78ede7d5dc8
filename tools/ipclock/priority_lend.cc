// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "priority_lend.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "exit_codes.h"

namespace ipclock_cli {

namespace {

// The fields of a /proc stat line after the command name, which may hold
// spaces and parentheses: [0] is field 3 (the state), [1] field 4 (ppid),
// [15] field 18 (the priority the scheduler uses now).
std::vector<std::string> StatFields(const char* text, size_t size) {
  const absl::string_view line(text, size);
  const size_t close = line.rfind(')');
  if (close == absl::string_view::npos) return {};
  return absl::StrSplit(line.substr(close + 1), ' ', absl::SkipEmpty());
}

std::string ReadSmallFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[1024];
  const ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Every thread of every process below `root` in the process tree.
std::vector<pid_t> ThreadsBelow(pid_t root) {
  std::multimap<pid_t, pid_t> children;  // parent -> child
  if (DIR* proc = opendir("/proc")) {
    while (struct dirent* e = readdir(proc)) {
      pid_t pid = 0;
      if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
      const std::string stat = ReadSmallFile(absl::StrCat("/proc/", pid, "/stat"));
      const std::vector<std::string> f = StatFields(stat.data(), stat.size());
      pid_t parent = 0;
      if (f.size() > 1 && absl::SimpleAtoi(f[1], &parent)) children.emplace(parent, pid);
    }
    closedir(proc);
  }
  std::vector<pid_t> threads;
  std::deque<pid_t> todo = {root};
  while (!todo.empty()) {
    const pid_t parent = todo.front();
    todo.pop_front();
    for (auto [it, end] = children.equal_range(parent); it != end; ++it) {
      todo.push_back(it->second);
      if (DIR* tasks = opendir(absl::StrCat("/proc/", it->second, "/task").c_str())) {
        while (struct dirent* e = readdir(tasks)) {
          pid_t tid = 0;
          if (absl::SimpleAtoi(e->d_name, &tid)) threads.push_back(tid);
        }
        closedir(tasks);
      }
    }
  }
  return threads;
}

bool RealTime(int policy) {
  const int p = policy & ~SCHED_RESET_ON_FORK;
  return p == SCHED_FIFO || p == SCHED_RR;
}

bool FifoAt(int policy, const struct sched_param& param, int priority) {
  return (policy & ~SCHED_RESET_ON_FORK) == SCHED_FIFO && param.sched_priority == priority;
}

}  // namespace

PriorityLender::PriorityLender(bool wanted, bool verbose) : verbose_(verbose) {
  if (!wanted) return;
  start_.policy = sched_getscheduler(0);
  if (start_.policy < 0 || sched_getparam(0, &start_.param) != 0) return;
  // This thread's own entry, whichever thread reads it later.
  stat_fd_ = open("/proc/thread-self/stat", O_RDONLY | O_CLOEXEC);
}

PriorityLender::~PriorityLender() {
  if (stat_fd_ >= 0) close(stat_fd_);
}

int PriorityLender::LentPriority() const {
  char buf[1024];
  const ssize_t n = pread(stat_fd_, buf, sizeof(buf), 0);
  if (n <= 0) return 0;
  const std::vector<std::string> f = StatFields(buf, static_cast<size_t>(n));
  int prio = 0;
  // The kernel's priority less 100: -1 - P for a real-time priority P,
  // 20 + nice otherwise; SCHED_DEADLINE's -101 counts as the highest.
  if (f.size() <= 15 || !absl::SimpleAtoi(f[15], &prio) || prio >= 0) return 0;
  const int lent = std::min(-1 - prio, sched_get_priority_max(SCHED_FIFO));
  const int own = RealTime(start_.policy) ? start_.param.sched_priority : 0;
  return lent > own ? lent : 0;
}

bool PriorityLender::Set(pid_t tid, const Policy& to, int priority) {
  if (sched_setscheduler(tid, to.policy, &to.param) == 0 || errno == ESRCH) return true;
  if (!refused_) {
    const int err = errno;
    refused_ = true;
    if (priority == 0) {
      Say(absl::StrCat("cannot give a thread of COMMAND its own scheduling policy back: "
                       "sched_setscheduler: ", strerror(err)));
    } else {
      Say(absl::StrCat("cannot lend a real-time waiter's priority (SCHED_FIFO ", priority,
                       ") to COMMAND: sched_setscheduler: ", strerror(err),
                       err == EPERM ? absl::StrCat(" (it needs CAP_SYS_NICE or an "
                                                   "RLIMIT_RTPRIO of at least ", priority, ")")
                                    : ""));
    }
  }
  return false;
}

void PriorityLender::Look() {
  if (!active() || refused_) return;
  const int lent = LentPriority();
  if (lent == applied_) return;
  Apply(lent);
  if (refused_) {
    Apply(0);  // a loan refused in part is given back in full
  } else if (verbose_) {
    SayInfo(lent > 0 ? absl::StrCat("a real-time waiter lends SCHED_FIFO priority ", lent,
                                    ": COMMAND runs at it while the loan lasts")
                     : "the loan of priority ended: COMMAND runs at its own again");
  }
}

void PriorityLender::Restore() {
  if (active() && !raised_.empty()) Apply(0);
}

void PriorityLender::Apply(int priority) {
  std::map<pid_t, Raised> left = raised_;  // those not found below ipclock any more
  for (pid_t tid : ThreadsBelow(getpid())) {
    left.erase(tid);
    Policy now;
    now.policy = sched_getscheduler(tid);
    if (now.policy < 0 || sched_getparam(tid, &now.param) != 0) continue;  // gone
    auto it = raised_.find(tid);
    if (it == raised_.end() && applied_ > 0 && FifoAt(now.policy, now.param, applied_)) {
      // Started by a raised thread, it inherited the loan; before it, it
      // had ipclock's own policy, as COMMAND did.
      it = raised_.emplace(tid, Raised{start_, applied_}).first;
    }
    if (it != raised_.end() && !FifoAt(now.policy, now.param, it->second.given)) {
      raised_.erase(it);  // it chose a policy of its own meanwhile
      continue;
    }
    if (priority == 0 || refused_) {
      if (it != raised_.end()) Set(tid, it->second.own, priority);
      continue;
    }
    if (it == raised_.end()) {
      if (RealTime(now.policy) && now.param.sched_priority >= priority) continue;
      it = raised_.emplace(tid, Raised{now, 0}).first;
    }
    Policy loan;
    loan.policy = SCHED_FIFO | (it->second.own.policy & SCHED_RESET_ON_FORK);
    loan.param.sched_priority = priority;
    if (Set(tid, loan, priority)) {
      it->second.given = priority;
    } else if (it->second.given == 0) {
      raised_.erase(it);
    }
  }
  for (const auto& [tid, raised] : left) {
    // Orphans that went to init: by their thread id, if still at the loan.
    Policy now;
    now.policy = sched_getscheduler(tid);
    if (now.policy >= 0 && sched_getparam(tid, &now.param) == 0 &&
        FifoAt(now.policy, now.param, raised.given)) {
      Set(tid, raised.own, priority);
    }
    raised_.erase(tid);
  }
  applied_ = priority;
  if (priority == 0) raised_.clear();
}

}  // namespace ipclock_cli
