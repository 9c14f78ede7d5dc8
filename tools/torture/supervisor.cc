// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "torture/supervisor.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/lock.h"
#include "torture/record.h"
#include "torture/worker.h"

namespace ipclock_torture {

namespace {

using ipclock::Deadline;

constexpr int64_t kMillis = 1000 * 1000;

class Supervisor {
 public:
  Supervisor(const Config& config, const WorkerParams& params)
      : config_(config), params_(params), record_(params.record) {}

  void Run(Result* result);

 private:
  void Start(int slot);
  // Reaps exited workers without blocking and starts new ones in their place.
  void ReapAndRestart();
  // False when nobody of the kind asked for could be killed right now.
  bool KillOne(Result* result);
  bool Done(int64_t now, uint64_t kills) const;
  uint64_t Iterations() const;
  void StopAll();

  const Config& config_;
  WorkerParams params_;
  Record* const record_;
  std::mt19937 rng_{static_cast<uint32_t>(getpid())};
  int64_t started_ns_ = 0;
};

void Supervisor::Start(int slot) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    ReportError(record_, "fork: %s", strerror(errno));
    return;
  }
  if (pid == 0) {
    params_.slot = slot;
    _exit(WorkerMain(params_));
  }
  record_->slots[slot].state.store(kIdle);
  record_->slots[slot].pid.store(pid);
}

void Supervisor::ReapAndRestart() {
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (int i = 0; i < config_.procs; ++i) {
      if (record_->slots[i].pid.load() != pid) continue;
      // Killed workers are reaped in KillOne(); anything else that ends a
      // worker before the stop is unexpected.
      ReportError(record_, "worker %d ended on its own (status 0x%x)", pid, status);
      record_->slots[i].pid.store(0);
      if (record_->stop.load() == 0) Start(i);
    }
  }
}

bool Supervisor::KillOne(Result* result) {
  // Half the kills aim at the holder, when there is one, so that both ends
  // of a handover are hit whatever the ratio of holding to waiting time.
  int holder = -1;
  int waiters[kMaxWorkers];
  int alive[kMaxWorkers];
  int n_waiters = 0;
  int n_alive = 0;
  for (int i = 0; i < config_.procs; ++i) {
    if (record_->slots[i].pid.load() <= 0) continue;
    alive[n_alive++] = i;
    const uint32_t state = record_->slots[i].state.load();
    if (state == kHolding) holder = i;
    if (state == kWaiting) waiters[n_waiters++] = i;
  }
  int victim = -1;
  switch (config_.victims) {
    case Config::Victims::kAny:
      if (n_alive == 0) return false;
      victim = (holder >= 0 && rng_() % 2 == 0) ? holder : alive[rng_() % n_alive];
      break;
    case Config::Victims::kHolders:
      victim = holder;
      break;
    case Config::Victims::kWaiters:
      if (n_waiters > 0) victim = waiters[rng_() % n_waiters];
      break;
  }
  if (victim < 0) return false;
  const pid_t pid = record_->slots[victim].pid.load();
  const bool was_holding = record_->slots[victim].state.load() == kHolding;
  record_->last_kill_pid.store(pid);
  record_->last_kill_ns.store(Deadline::NowNanos());
  kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  record_->slots[victim].pid.store(0);
  ++result->kills;
  ++(was_holding ? result->holder_kills : result->waiter_kills);
  Start(victim);
  return true;
}

uint64_t Supervisor::Iterations() const {
  uint64_t sum = 0;
  for (int i = 0; i < config_.procs; ++i) sum += record_->slots[i].iterations.load();
  return sum;
}

bool Supervisor::Done(int64_t now, uint64_t kills) const {
  if (config_.seconds > 0) {
    return now - started_ns_ >= static_cast<int64_t>(config_.seconds * 1e9);
  }
  return Iterations() >= config_.iterations && kills >= config_.min_kills;
}

void Supervisor::StopAll() {
  record_->stop.store(1);
  // Workers finish their step and leave; a waiter leaves within the bound.
  const int64_t until = Deadline::NowNanos() +
                        absl::ToInt64Nanoseconds(params_.wait_bound) + 10000 * kMillis;
  for (int i = 0; i < config_.procs; ++i) {
    const pid_t pid = record_->slots[i].pid.load();
    if (pid <= 0) continue;
    int status = 0;
    for (;;) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) break;
      if (Deadline::NowNanos() > until) {
        ReportViolation(record_, "worker %d did not stop; killed", pid);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      usleep(1000);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      ReportError(record_, "worker %d exited with %d", pid, WEXITSTATUS(status));
    }
    record_->slots[i].pid.store(0);
  }
}

void Supervisor::Run(Result* result) {
  started_ns_ = Deadline::NowNanos();
  record_->last_progress_ns.store(started_ns_);
  for (int i = 0; i < config_.procs; ++i) Start(i);
  const int64_t kill_every = static_cast<int64_t>(config_.kill_every_ms) * kMillis;
  // No acquisition at all for this long means every worker is stuck.
  const int64_t stall_limit =
      absl::ToInt64Nanoseconds(params_.wait_bound) + 5000 * kMillis;
  int64_t next_kill = started_ns_ + kill_every;
  for (;;) {
    const int64_t now = Deadline::NowNanos();
    if (Done(now, result->kills)) break;
    if (now - record_->last_progress_ns.load() > stall_limit) {
      ReportViolation(record_, "no worker got the lock for %.1f s",
                      static_cast<double>(now - record_->last_progress_ns.load()) / 1e9);
      break;
    }
    ReapAndRestart();
    bool kill_pending = false;
    if (kill_every > 0 && now >= next_kill) {
      kill_pending = !KillOne(result);
      if (!kill_pending) {
        next_kill += kill_every;
        if (next_kill < now) next_kill = now + kill_every;  // fell behind
      }
    }
    int64_t nap = 2 * kMillis;
    if (kill_every > 0) nap = std::min(nap, std::max<int64_t>(next_kill - now, 0));
    if (kill_pending) nap = 100 * 1000;  // look again for a victim soon
    if (nap > 0) usleep(static_cast<useconds_t>(nap / 1000));
  }
  StopAll();
  result->seconds = static_cast<double>(Deadline::NowNanos() - started_ns_) / 1e9;
}

}  // namespace

void FinalCheck(const std::shared_ptr<ipclock::Store>& store, const WorkerParams& p) {
  ipclock::LockOptions options;
  options.ttl = p.ttl;
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, p.resource, options);
  if (!lock.ok()) {
    ReportError(p.record, "final check: %s", lock.status().ToString().c_str());
    return;
  }
  absl::Status s = lock->Acquire(p.wait_bound);
  if (!s.ok()) {
    ReportViolation(p.record, "final check: the lock cannot be had after the run: %s",
                    s.ToString().c_str());
    return;
  }
  if (absl::Status rel = lock->Release(); !rel.ok()) {
    ReportError(p.record, "final check: release: %s", rel.ToString().c_str());
  }
}

absl::StatusOr<Result> RunTorture(const Config& config, const std::string& dsn) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> probe = OpenStore(dsn);
  if (!probe.ok()) return probe.status();
  const ipclock::Capabilities caps = (*probe)->capabilities();
  if (caps.scope == ipclock::Scope::kProcess && !config.allow_process_scope) {
    return absl::FailedPreconditionError(absl::StrCat(
        "torture: ", (*probe)->Describe(),
        " excludes threads of one process only; torture needs a store that "
        "processes share"));
  }
  Result result;
  result.store = (*probe)->Describe();
  // The workers open their own stores; nothing of this one is inherited.
  probe->reset();

  WorkerParams params;
  params.record = MapRecord();
  params.dsn = dsn;
  params.resource = config.resource.empty() ? absl::StrCat("torture-", getpid())
                                            : config.resource;
  params.ttl = caps.expiring ? absl::Milliseconds(config.ttl_ms) : absl::Seconds(300);
  params.wait_bound = absl::Milliseconds(config.wait_bound_ms);
  if (config.wait_bound_ms == 0) {
    params.wait_bound = absl::Seconds(10) + (caps.expiring ? params.ttl : absl::ZeroDuration());
  }
  params.hold_us = config.hold_us;

  Supervisor supervisor(config, params);
  supervisor.Run(&result);

  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(dsn);
  if (store.ok()) {
    FinalCheck(*store, params);
  } else {
    ReportError(params.record, "final check: %s", store.status().ToString().c_str());
  }

  Record* r = params.record;
  for (int i = 0; i < config.procs; ++i) result.iterations += r->slots[i].iterations.load();
  result.takeovers = r->takeovers.load();
  result.half_steps = r->half_steps.load();
  result.violations = r->violations.load();
  result.errors = r->errors.load();
  result.worst_wait_ms = static_cast<double>(r->worst_wait_ns.load()) / 1e6;
  result.worst_handover_after_death_ms =
      static_cast<double>(r->worst_handover_after_death_ns.load()) / 1e6;
  const uint32_t kept = std::min<uint32_t>(r->message_count.load(), kMaxMessages);
  for (uint32_t i = 0; i < kept; ++i) result.messages.emplace_back(r->messages[i]);
  UnmapRecord(r);
  return result;
}

}  // namespace ipclock_torture
