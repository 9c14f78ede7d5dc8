// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The invariants, checked by every worker on every acquisition:
//
//   * One owner. The record names its holder (an incarnation id, pid and
//     start time). A new holder that finds a name there must find that
//     process dead: it was killed holding the lock. A live one means two
//     holders at once. A holder also checks, just before it commits, that
//     the record still names it.
//   * No lost update. `counter` equals `committed`, the value the last
//     complete step left, unless a holder was killed between writing
//     `intent` and clearing it: then `counter` is `intent - 1` (killed
//     before its increment) or `intent` (after it), nothing else.
//   * Owner death reported. When the previous holder died holding the lock,
//     a store with the `owner_death` capability says so.
//   * Liveness. A wait that lasts longer than the bound is a starvation:
//     with holders that keep the lock for microseconds, only a lock that
//     nobody can get anymore (a lost permit, a stale lease) does that.
//
// Caveat, handled in WaitUntilGone(): the kernel frees a killed holder's
// flock, SEM_UNDO or robust mutex while the process is still exiting, before
// it becomes a zombie, so a new holder may briefly see the process that is
// being killed as alive.

#include "torture/worker.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <memory>
#include <random>

#include "absl/status/status.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/lock.h"
#include "ipclock/store_factory.h"
#include "platform/proc_pid.h"

namespace ipclock_torture {

namespace {

using ipclock::Deadline;

// How long a holder that the record still names may take to finish dying.
constexpr int64_t kDeathGraceNanos = 5LL * 1000 * 1000 * 1000;

bool WaitUntilGone(pid_t pid, uint64_t start_time) {
  const int64_t until = Deadline::NowNanos() + kDeathGraceNanos;
  while (!ipclock::ProcessIsGone(pid, start_time)) {
    if (Deadline::NowNanos() > until) return false;
    usleep(100);
  }
  return true;
}

void SleepMicros(int us) {
  if (us <= 0) return;
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

class Worker {
 public:
  explicit Worker(const WorkerParams& p)
      : p_(p), r_(p.record), data_(&p.record->data), me_(&p.record->slots[p.slot]) {}

  int Run();

 private:
  // Checks the record as the previous holder left it.
  void CheckOnAcquire(int64_t wait_start_ns, int64_t got_ns, bool death_reported);
  void Step();

  const WorkerParams p_;
  Record* const r_;
  Protected* const data_;
  WorkerSlot* const me_;
  uint64_t incarnation_ = 0;
  pid_t pid_ = 0;
  uint64_t start_time_ = 0;
  bool store_reports_death_ = false;
  std::mt19937 rng_;
};

int Worker::Run() {
  incarnation_ = r_->next_incarnation.fetch_add(1);
  pid_ = getpid();
  start_time_ = ipclock::ProcessStartTime(pid_);
  rng_.seed(static_cast<uint32_t>(pid_) ^ static_cast<uint32_t>(Deadline::NowNanos()));

  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(p_.dsn);
  if (!store.ok()) {
    ReportError(r_, "worker %d: %s", pid_, store.status().ToString().c_str());
    return 3;
  }
  store_reports_death_ = (*store)->capabilities().owner_death;
  ipclock::LockOptions lock_options;
  lock_options.ttl = p_.ttl;
  absl::StatusOr<ipclock::Lock> lock =
      ipclock::Lock::Create(*store, p_.resource, lock_options);
  if (!lock.ok()) {
    ReportError(r_, "worker %d: %s", pid_, lock.status().ToString().c_str());
    return 3;
  }

  while (r_->stop.load() == 0) {
    me_->state.store(kWaiting);
    const int64_t wait_start = Deadline::NowNanos();
    absl::Status s = lock->Acquire(p_.wait_bound);
    if (s.ok()) me_->state.store(kHolding);
    const int64_t got = Deadline::NowNanos();
    if (!s.ok()) {
      me_->state.store(kIdle);
      if (r_->stop.load() != 0) break;
      if (absl::IsDeadlineExceeded(s)) {
        ReportViolation(r_,
                        "worker %d waited %.1f s without getting the lock "
                        "(record names pid %d as holder)",
                        pid_, static_cast<double>(got - wait_start) / 1e9,
                        data_->owner_pid.load());
      } else {
        ReportError(r_, "worker %d: acquire: %s", pid_, s.ToString().c_str());
        SleepMicros(10 * 1000);  // a failing store must not spin the CPU
      }
      continue;
    }
    CheckOnAcquire(wait_start, got, lock->previous_owner_died());
    Step();
    me_->iterations.fetch_add(1);
    if (absl::Status rel = lock->Release(); !rel.ok()) {
      ReportError(r_, "worker %d: release: %s", pid_, rel.ToString().c_str());
    }
    me_->state.store(kIdle);
  }
  return 0;
}

void Worker::CheckOnAcquire(int64_t wait_start_ns, int64_t got_ns,
                            bool death_reported) {
  StoreMax(&r_->worst_wait_ns, got_ns - wait_start_ns);
  r_->last_progress_ns.store(got_ns);

  const uint64_t previous = data_->owner.load();
  const bool inside = data_->inside.load() != 0;
  if (previous != 0) {
    // The previous holder never reached its release: it must be dead.
    const pid_t prev_pid = data_->owner_pid.load();
    const uint64_t prev_start = data_->owner_start.load();
    // Only the process the supervisor is killing may still be on its way
    // out (it kills one at a time and reaps it before the next); any other
    // live holder is a second holder at once.
    const bool dying = r_->last_kill_pid.load() == prev_pid;
    if (!(dying ? WaitUntilGone(prev_pid, prev_start)
                : ipclock::ProcessIsGone(prev_pid, prev_start))) {
      ReportViolation(r_,
                      "two holders: pid %d got the lock while pid %d, which "
                      "never released it, is alive",
                      pid_, prev_pid);
      return;
    }
    r_->takeovers.fetch_add(1);
    if (store_reports_death_ && !death_reported) {
      ReportViolation(r_,
                      "pid %d took over from pid %d, which died holding the "
                      "lock, and the store did not report the death",
                      pid_, prev_pid);
    }
    if (r_->last_kill_pid.load() == prev_pid) {
      const int64_t since = std::max(r_->last_kill_ns.load(), wait_start_ns);
      StoreMax(&r_->worst_handover_after_death_ns, got_ns - since);
    }
    const uint64_t intent = data_->intent.load();
    const uint64_t counter = data_->counter.load();
    if (intent != 0) {
      r_->half_steps.fetch_add(1);
      if (counter != intent && counter + 1 != intent) {
        ReportViolation(r_,
                        "lost update: counter %" PRIu64 " after a holder died "
                        "half-way to %" PRIu64,
                        counter, intent);
      }
      data_->committed.store(counter);
      data_->intent.store(0);
    } else if (counter != data_->committed.load()) {
      ReportViolation(r_, "lost update: counter %" PRIu64 ", committed %" PRIu64,
                      counter, data_->committed.load());
      data_->committed.store(counter);
    }
  } else {
    if (inside || data_->intent.load() != 0) {
      ReportViolation(r_,
                      "two holders: pid %d got the lock while another holder "
                      "was inside (inside=%d intent=%" PRIu64 ")",
                      pid_, inside ? 1 : 0, data_->intent.load());
    }
    const uint64_t counter = data_->counter.load();
    if (counter != data_->committed.load()) {
      ReportViolation(r_, "lost update: counter %" PRIu64 ", committed %" PRIu64,
                      counter, data_->committed.load());
      data_->committed.store(counter);
    }
  }
}

void Worker::Step() {
  // Who we are goes in before the owner id, so that a reader that sees our
  // id also sees our pid (a holder killed in between leaves the old id).
  data_->owner_pid.store(pid_);
  data_->owner_start.store(start_time_);
  data_->owner.store(incarnation_);
  data_->inside.store(1);

  const uint64_t value = data_->counter.load();
  data_->intent.store(value + 1);
  SleepMicros(p_.hold_us > 0 ? static_cast<int>(rng_() % (p_.hold_us + 1)) : 0);
  if (data_->owner.load() != incarnation_) {
    ReportViolation(r_, "two holders: pid %d lost the record to incarnation %" PRIu64
                    " while holding the lock",
                    pid_, data_->owner.load());
  }
  data_->counter.store(value + 1);
  data_->committed.store(value + 1);
  data_->intent.store(0);

  data_->inside.store(0);
  data_->owner.store(0);
}

}  // namespace

absl::StatusOr<std::shared_ptr<ipclock::Store>> OpenStore(const std::string& dsn) {
  ipclock::StoreOptions options;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  return ipclock::StoreFromDsn(dsn, options);
}

int WorkerMain(const WorkerParams& params) {
  Worker worker(params);
  return worker.Run();
}

}  // namespace ipclock_torture
