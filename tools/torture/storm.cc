// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// How a kill goes, and why in this order. The victim `ipclock` is stopped
// first (SIGSTOP, and waitpid(WUNTRACED) until it is), so that it neither
// sees its command die nor forks another; its command is then found among
// the processes whose parent it is, killed with its process group, and
// waited for until it is gone (a zombie: its parent is stopped); only then
// is the `ipclock` killed. The lock is thus freed by the death of its
// holder, never by a release, and the command was dead before: whoever
// gets the lock next finds a dead occupant in the record, and must have been
// told. The storm is the subreaper of everything it starts, so that killed
// commands, orphaned by their `ipclock`, are reaped here.

#include "torture/storm.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ipclock/spi/deadline.h"
#include "platform/proc_pid.h"
#include "torture/record.h"
#include "torture/worker.h"

namespace ipclock_torture {

namespace {

using ipclock::Deadline;

constexpr int64_t kMillis = 1000 * 1000;
// How long a SIGKILLed command may take to become a zombie.
constexpr int64_t kDeathGraceNanos = 5000 * kMillis;

std::string Seconds(absl::Duration d) {
  return absl::StrFormat("%.3f", absl::ToDoubleSeconds(d));
}

std::string BesideThisProgram(const char* name) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return name;
  self[n] = '\0';
  std::string dir(self);
  dir.resize(dir.rfind('/') + 1);
  return dir + name;
}

class Storm {
 public:
  Storm(const Config& config, std::vector<std::string> argv, Record* record)
      : config_(config), argv_(std::move(argv)), record_(record) {}

  void Run(Result* result);

 private:
  void Start(int slot);
  // Reaps what ended (runs and orphaned commands) and starts runs again.
  void Reap();
  // Counts how run `pid`, of `slot`, ended on its own.
  void Ended(int slot, pid_t pid, int status);
  // Kills the run of `slot`. False when it ended before it could be
  // stopped.
  bool Kill(int slot, Result* result);
  // The slot to kill now, or -1 to look again a moment later.
  int PickVictim(int64_t now, int64_t due);
  void StopAll();
  bool Done(int64_t now, const Result& result) const;

  const Config& config_;
  const std::vector<std::string> argv_;
  Record* const record_;
  std::vector<pid_t> runs_;
  bool stopping_ = false;
  bool aim_inside_ = false;
  std::mt19937 rng_{static_cast<uint32_t>(getpid())};
  int64_t started_ns_ = 0;
};

void Storm::Start(int slot) {
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    ReportError(record_, "fork: %s", strerror(errno));
    return;
  }
  if (pid == 0) {
    // No controlling terminal, as under cron or systemd: `ipclock run` then
    // puts its command in a process group of its own.
    setsid();
    std::vector<char*> argv;
    for (const std::string& a : argv_) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    fprintf(stderr, "torture: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  runs_[slot] = pid;
}

void Storm::Ended(int slot, pid_t pid, int status) {
  runs_[slot] = 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    // ok
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 1) {
    ReportViolation(record_, "ipclock %d did not get the lock within the wait bound", pid);
  } else {
    ReportError(record_, "ipclock %d ended with status 0x%x", pid, status);
  }
  if (!stopping_) Start(slot);
}

void Storm::Reap() {
  for (;;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    // Anything else is a command orphaned by a kill: reaped, nothing more.
    for (size_t i = 0; i < runs_.size(); ++i) {
      if (runs_[i] == pid) Ended(static_cast<int>(i), pid, status);
    }
  }
}

int Storm::PickVictim(int64_t now, int64_t due) {
  std::vector<int> alive;
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (runs_[i] > 0) alive.push_back(static_cast<int>(i));
  }
  if (alive.empty()) return -1;
  // Half the kills aim at the run whose command is inside the lock, so that
  // most of the storm's deaths are deaths inside it: such a kill waits (a
  // hold at most) for a command to be inside.
  if (aim_inside_) {
    const pid_t parent = record_->data.owner_parent.load();
    for (int i : alive) {
      if (record_->data.owner_pid.load() != 0 && runs_[i] == parent) return i;
    }
    if (now - due < (int64_t{config_.hold_us} * 1000 + 20 * kMillis)) return -1;
  }
  return alive[rng_() % alive.size()];
}

bool Storm::Kill(int slot, Result* result) {
  const pid_t pid = runs_[slot];
  kill(pid, SIGSTOP);
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid, &status, WUNTRACED)) < 0 && errno == EINTR) {
  }
  if (r == pid && !WIFSTOPPED(status)) {
    Ended(slot, pid, status);  // it finished first
    return false;
  }
  bool killed_inside = false;
  const pid_t occupant = record_->data.owner_pid.load();
  std::vector<pid_t> commands = ipclock::ChildProcesses(pid);
  for (pid_t c : commands) {
    killed_inside = killed_inside || c == occupant;
    kill(c, SIGKILL);
    kill(-c, SIGKILL);  // its process group, if it made one
  }
  for (pid_t c : commands) {
    const int64_t until = Deadline::NowNanos() + kDeathGraceNanos;
    while (!ipclock::ProcessIsGone(c, 0)) {
      if (Deadline::NowNanos() > until) {
        ReportError(record_, "command %d of ipclock %d did not die within 5 s of SIGKILL", c,
                    pid);
        break;
      }
      usleep(100);
    }
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  runs_[slot] = 0;
  ++result->kills;
  ++(killed_inside ? result->holder_kills : result->waiter_kills);
  if (!stopping_) Start(slot);
  return true;
}

bool Storm::Done(int64_t now, const Result& result) const {
  if (config_.seconds > 0) {
    return now - started_ns_ >= static_cast<int64_t>(config_.seconds * 1e9);
  }
  return record_->sections.load() >= config_.iterations && result.kills >= config_.min_kills;
}

void Storm::StopAll() {
  stopping_ = true;
  // Each run ends once it got the lock and its command ran.
  const int64_t until =
      Deadline::NowNanos() + (static_cast<int64_t>(config_.procs) + 10) * 1000 * kMillis;
  for (;;) {
    Reap();
    if (std::all_of(runs_.begin(), runs_.end(), [](pid_t p) { return p <= 0; })) break;
    if (Deadline::NowNanos() > until) {
      for (pid_t& p : runs_) {
        if (p <= 0) continue;
        ReportViolation(record_, "ipclock %d did not end after the storm; killed", p);
        kill(p, SIGKILL);
        waitpid(p, nullptr, 0);
        p = 0;
      }
      break;
    }
    usleep(1000);
  }
  Reap();  // the last orphans
}

void Storm::Run(Result* result) {
  runs_.assign(static_cast<size_t>(config_.procs), 0);
  started_ns_ = Deadline::NowNanos();
  for (int i = 0; i < config_.procs; ++i) Start(i);
  std::uniform_int_distribution<int64_t> pause(0, int64_t{config_.kill_every_ms} * kMillis);
  int64_t next_kill = config_.kill_every_ms > 0 ? started_ns_ + pause(rng_) : INT64_MAX;
  for (;;) {
    const int64_t now = Deadline::NowNanos();
    if (Done(now, *result)) break;
    Reap();
    if (now >= next_kill) {
      const int slot = PickVictim(now, next_kill);
      if (slot >= 0) {
        Kill(slot, result);
        next_kill = Deadline::NowNanos() + pause(rng_);
        aim_inside_ = rng_() % 2 == 0;
      }
    }
    const int64_t nap = std::min<int64_t>(kMillis, std::max<int64_t>(next_kill - now, 0));
    if (nap > 0) usleep(static_cast<useconds_t>(nap / 1000));
  }
  StopAll();
  result->seconds = static_cast<double>(Deadline::NowNanos() - started_ns_) / 1e9;
}

}  // namespace

absl::StatusOr<Result> RunStorm(const Config& config, const std::string& dsn) {
  const std::string section =
      config.section.empty() ? BesideThisProgram("torture-section") : config.section;
  for (const std::string& program : {config.cli, section}) {
    if (access(program.c_str(), X_OK) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("torture: cannot run ", program, ": ", strerror(errno)));
    }
  }
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(dsn);
  if (!store.ok()) return store.status();
  const ipclock::Capabilities caps = (*store)->capabilities();
  Result result;
  result.store = (*store)->Describe();
  result.storm = true;

  char dir[] = "/tmp/ipclock-storm-XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    return absl::InternalError(absl::StrCat("torture: mkdtemp: ", strerror(errno)));
  }
  const std::string record_path = absl::StrCat(dir, "/record");
  Record* record = CreateRecordFile(record_path.c_str());
  if (record == nullptr) {
    rmdir(dir);
    return absl::InternalError("torture: cannot make the storm's record");
  }

  WorkerParams params;
  params.record = record;
  params.dsn = dsn;
  params.resource = config.resource.empty() ? absl::StrCat("storm-", getpid()) : config.resource;
  params.ttl = caps.expiring ? absl::Milliseconds(config.ttl_ms) : absl::Seconds(300);
  params.wait_bound = config.wait_bound_ms > 0
                          ? absl::Milliseconds(config.wait_bound_ms)
                          : absl::Seconds(10) + (caps.expiring ? params.ttl : absl::ZeroDuration());

  std::vector<std::string> argv = {config.cli, "run", "--store", dsn, "--key", params.resource,
                                   "-w", Seconds(params.wait_bound)};
  if (caps.expiring) {
    argv.insert(argv.end(), {"--ttl", Seconds(params.ttl)});
  }
  argv.insert(argv.end(), {"--", section, record_path, absl::StrCat(config.hold_us)});

  // Orphaned commands come to us, not to init, so that we reap them.
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  Storm storm(config, std::move(argv), record);
  storm.Run(&result);
  prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  FinalCheck(*store, params);

  result.iterations = record->sections.load();
  result.takeovers = record->takeovers.load();
  result.deaths_told = record->deaths_told.load();
  result.deaths_told_unseen = record->deaths_told_unseen.load();
  result.violations = record->violations.load();
  result.errors = record->errors.load();
  const uint32_t kept = std::min<uint32_t>(record->message_count.load(), kMaxMessages);
  for (uint32_t i = 0; i < kept; ++i) result.messages.emplace_back(record->messages[i]);
  UnmapRecordFile(record);
  unlink(record_path.c_str());
  rmdir(dir);
  return result;
}

}  // namespace ipclock_torture
