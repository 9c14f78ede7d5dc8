// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// AsyncWaiter. See include/ipclock/async.h for the contract and the choice
// of mechanism. The life of one acquisition:
//
//   Start ──try──> acquired ─────────────────────────────┐
//     │                                                    │
//     └─> armed: a futex wait (ring or helper thread) on   ├─> finished ─>
//         the store's word, or a helper running the        │   callback in
//         store's blocking wait                            │   ProcessReady
//           │ woken / value changed ──try──> acquired ─────┤
//           │   └─ still held: arm again                   │
//           └ deadline / cancel / error ───────────────────┘
//
// An acquisition's record stays until its callback has run and every ring
// completion or helper result it expects has come back, so that a late
// completion is never mistaken for another acquisition's (ids are never
// reused either).
//
// Lost wake-ups are the hazard of sleeping on a glibc mutex's word from the
// outside (src/platform/mutex_futex.h): glibc's unlock wakes one sleeper, so
// a sleeper that is woken must either take the lock (and set FUTEX_WAITERS
// again, for the sleepers behind it) or pass the wake on with a FUTEX_WAKE
// of one. Every path below that ends after a wake without the lock does the
// latter: cancellation, an error, and the waiter's destruction.

#include "ipclock/async.h"

#include <errno.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/diagnostics.h"
#include "core/async_fallback.h"
#include "core/platform_deadline.h"
#include "platform/environment.h"
#include "platform/errors.h"
#include "platform/event_signal.h"
#include "core/lock_access.h"
#include "platform/futex.h"
#include "platform/io_uring_futex.h"
#include "ipclock/spi/store_interface.h"
#include "platform/scoped_fd.h"

namespace ipclock {

namespace {

// user_data of ring requests: the acquisition's id and what the request is.
constexpr uint64_t kTagWait = 1;
constexpr uint64_t kTagTimeout = 2;
constexpr uint64_t kTagCancel = 3;
uint64_t RingData(AsyncId id, uint64_t tag) { return id << 2 | tag; }

bool FallbackForcedByEnv() {
  const char* v = EnvironmentValue("IPCLOCK_ASYNC_FORCE_FALLBACK");
  return v != nullptr && strcmp(v, "1") == 0;
}

void ReportFallbackOnce(const absl::Status& why) {
  static std::atomic<bool> reported{false};
  if (reported.exchange(true)) return;
  EmitNotice(DiagnosticSeverity::kInfo,
              absl::StrCat("ipclock: async lock waits use helper threads, not "
                           "io_uring: ", why.message()));
}

absl::Status CancelledStatus() {
  return absl::CancelledError("ipclock: async wait cancelled");
}

enum class Path : uint8_t {
  kRing,           // io_uring futex waits on the store's word
  kFutexThread,    // a helper's futex waits on the store's word
  kAcquireThread,  // a helper runs the store's own blocking wait
};

struct Op {
  AsyncId id = 0;
  Lock* lock = nullptr;
  LockMode mode = LockMode::kExclusive;
  Deadline deadline = Deadline::Never();
  absl::Duration timeout;
  AsyncCallback done;
  Path path = Path::kAcquireThread;
  WaitWord word;
  int outstanding = 0;  // ring completions and helper results still due
  bool armed = false;   // a wait or helper job is out
  bool cancel_requested = false;
  bool finished = false;
  bool delivered = false;
  absl::Status result;
};

class AsyncWaiterImpl final : public AsyncWaiter {
 public:
  AsyncWaiterImpl(EventSignal signal, std::unique_ptr<FutexRing> ring)
      : signal_(std::move(signal)), ring_(std::move(ring)) {}
  ~AsyncWaiterImpl() override;

  int fd() const override { return signal_.fd(); }
  absl::StatusOr<AsyncId> Start(Lock& lock, LockMode mode, absl::Duration timeout,
                                AsyncCallback done) override;
  size_t ProcessReady() override;
  absl::Status Cancel(AsyncId id) override;
  size_t pending() const override { return pending_; }
  bool uses_io_uring() const override { return ring_ != nullptr; }

 private:
  Op* Find(AsyncId id);
  void Finish(Op& op, absl::Status status);
  // Tries once; if the lock is held, arms a wait unless the deadline has
  // passed. `after_wake`: this follows a wake that may have been meant for
  // another sleeper too.
  void TryOrArm(Op& op, bool after_wake);
  absl::Status ArmFutex(Op& op);
  void OnWaitEnded(Op& op, bool woken);
  void OnCompletion(uint64_t data, int res);
  void OnJobResult(WaitJobResult r);
  void PassWakeOn(const Op& op) { FutexWake(op.word.word, 1, op.word.shared); }
  void Notify();
  WaitThreads& threads();
  void MaybeForget(AsyncId id);

  // Declared first: helper threads write to it until they are joined.
  EventSignal signal_;
  std::unique_ptr<FutexRing> ring_;
  std::unique_ptr<WaitThreads> threads_;  // made on first use
  absl::flat_hash_map<AsyncId, std::unique_ptr<Op>> ops_;
  absl::flat_hash_set<const Lock*> busy_;
  std::vector<AsyncId> ready_;
  AsyncId next_id_ = 1;
  size_t pending_ = 0;
};

AsyncWaiterImpl::~AsyncWaiterImpl() {
  for (auto& [id, op] : ops_) {
    if (!op->finished) op->cancel_requested = true;
  }
  // Helpers first: each ends at once (futex jobs) or within a slice, and one
  // that acquired after the cancellation releases on its own thread.
  if (threads_ != nullptr) {
    threads_->Shutdown();
    for (WaitJobResult& r : threads_->TakeResults()) OnJobResult(std::move(r));
  }
  // Ring waits are cancelled and their completions awaited here rather than
  // left to the ring's teardown, which finishes in the background: a wait
  // that consumed a release's wake must pass it on, and only its completion
  // says whether it did.
  std::vector<const Op*> uncancelled;
  if (ring_ != nullptr) {
    size_t armed = 0;
    for (auto& [id, op] : ops_) {
      if (op->path != Path::kRing || !op->armed) continue;
      if (ring_->Cancel(RingData(id, kTagWait), RingData(id, kTagCancel)).ok()) {
        ++op->outstanding;
        ++armed;
      } else {
        uncancelled.push_back(op.get());
      }
    }
    while (armed > 0) {
      ring_->WaitAndDrain([&](uint64_t data, int res) {
        Op* op = Find(data >> 2);
        if (op != nullptr && op->armed && (data & 3) == kTagWait) --armed;
        OnCompletion(data, res);
      });
    }
  }
  // Acquisitions that ended with the lock but whose callbacks never ran.
  for (auto& [id, op] : ops_) {
    if (!op->delivered && op->finished && op->result.ok()) {
      op->lock->Release().IgnoreError();
    }
  }
  // Waits that could not be cancelled end with the ring; not knowing whether
  // they consumed a wake, pass one on for each.
  ring_.reset();
  for (const Op* op : uncancelled) PassWakeOn(*op);
}

WaitThreads& AsyncWaiterImpl::threads() {
  if (threads_ == nullptr) threads_ = std::make_unique<WaitThreads>(&signal_);
  return *threads_;
}

Op* AsyncWaiterImpl::Find(AsyncId id) {
  auto it = ops_.find(id);
  return it == ops_.end() ? nullptr : it->second.get();
}

void AsyncWaiterImpl::Notify() { signal_.Notify(); }

void AsyncWaiterImpl::Finish(Op& op, absl::Status status) {
  op.finished = true;
  op.armed = false;
  op.result = std::move(status);
  ready_.push_back(op.id);
  Notify();
}

absl::StatusOr<AsyncId> AsyncWaiterImpl::Start(Lock& lock, LockMode mode,
                                               absl::Duration timeout,
                                               AsyncCallback done) {
  if (busy_.contains(&lock)) {
    return absl::FailedPreconditionError(
        "ipclock: AsyncWaiter::Start: this Lock already has a pending async wait");
  }
  Store& store = internal::LockAccess::store(lock);
  if (mode == LockMode::kShared && !store.capabilities().shared) {
    return StoreError(absl::StatusCode::kInvalidArgument, store.Describe(),
                      lock.resource(), "this store has no shared locks");
  }
  absl::StatusOr<WaitWord> word =
      StoreCalls::GetWaitWord(store, internal::LockAccess::key(lock));
  if (!word.ok()) return word.status();

  auto owned = std::make_unique<Op>();
  Op& op = *owned;
  op.id = next_id_++;
  op.lock = &lock;
  op.mode = mode;
  op.timeout = timeout;
  op.deadline = Deadline::In(timeout);
  op.done = std::move(done);
  op.word = *word;
  if (word->word == nullptr) {
    op.path = Path::kAcquireThread;
  } else {
    op.path = ring_ != nullptr ? Path::kRing : Path::kFutexThread;
  }
  ops_.emplace(op.id, std::move(owned));
  busy_.insert(&lock);
  ++pending_;
  TryOrArm(op, /*after_wake=*/false);
  return op.id;
}

absl::Status AsyncWaiterImpl::ArmFutex(Op& op) {
  uint32_t* w = op.word.word;
  for (;;) {
    uint32_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    if ((v & op.word.owner_mask) == 0) {
      // Released (or its owner died) since the try: try again rather than
      // sleep on a free lock.
      absl::StatusOr<bool> got = op.lock->TryAcquire(op.mode);
      if (!got.ok()) return got.status();
      if (*got) {
        // The lock was held a moment ago, and its release may have found
        // no waiters bit and woken nobody: whoever sleeps behind us must be
        // woken by our release.
        __atomic_fetch_or(w, op.word.waiters_bit, __ATOMIC_ACQ_REL);
        Finish(op, absl::OkStatus());
        return absl::OkStatus();
      }
      continue;
    }
    const uint32_t bit = op.word.waiters_bit;
    if ((v & bit) != bit) {
      // Without this bit the release would wake nobody (glibc's protocol).
      if (!__atomic_compare_exchange_n(w, &v, v | bit, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE)) {
        continue;
      }
      v |= bit;
    }
    if (op.path == Path::kRing) {
      absl::Status s = ring_->Wait(w, v, op.word.shared, ForPlatform(op.deadline),
                                   RingData(op.id, kTagWait), RingData(op.id, kTagTimeout));
      if (!s.ok()) return s;
      op.outstanding += op.deadline.is_never() ? 1 : 2;
    } else {
      WaitJob job;
      job.id = op.id;
      job.kind = WaitJob::Kind::kFutex;
      job.deadline = op.deadline;
      job.word = w;
      job.expected = v;
      job.shared = op.word.shared;
      if (absl::Status s = threads().Submit(job); !s.ok()) return s;
      op.outstanding += 1;
    }
    op.armed = true;
    return absl::OkStatus();
  }
}

void AsyncWaiterImpl::TryOrArm(Op& op, bool after_wake) {
  absl::StatusOr<bool> got = op.lock->TryAcquire(op.mode);
  if (got.ok() && *got) {
    if (after_wake && op.word.word != nullptr) {
      // This try may have taken a wake meant for every sleeper behind us:
      // make our release wake the next one, as glibc's lock does.
      __atomic_fetch_or(op.word.word, op.word.waiters_bit, __ATOMIC_ACQ_REL);
    }
    Finish(op, absl::OkStatus());
    return;
  }
  absl::Status failure;
  if (!got.ok()) {
    failure = got.status();
  } else if (op.deadline.has_passed()) {
    failure = StoreError(absl::StatusCode::kDeadlineExceeded, op.lock->store().Describe(),
                         op.lock->resource(),
                         absl::StrCat("still held by another owner after ",
                                      absl::FormatDuration(op.timeout), " (async wait)"));
  } else if (op.path == Path::kAcquireThread) {
    WaitJob job;
    job.id = op.id;
    job.kind = WaitJob::Kind::kAcquire;
    job.deadline = op.deadline;
    job.lock = op.lock;
    job.mode = op.mode;
    failure = threads().Submit(job);
    if (failure.ok()) {
      op.outstanding += 1;
      op.armed = true;
      return;
    }
  } else {
    failure = ArmFutex(op);
    if (failure.ok()) return;  // armed, or finished with the lock
  }
  if (after_wake && op.word.word != nullptr) PassWakeOn(op);
  Finish(op, std::move(failure));
}

void AsyncWaiterImpl::OnWaitEnded(Op& op, bool woken) {
  op.armed = false;
  if (op.finished || op.cancel_requested) {
    if (woken) PassWakeOn(op);
    if (!op.finished) Finish(op, CancelledStatus());
    return;
  }
  TryOrArm(op, woken);
}

void AsyncWaiterImpl::OnCompletion(uint64_t data, int res) {
  Op* op = Find(data >> 2);
  if (op == nullptr) return;
  --op->outstanding;
  if ((data & 3) == kTagWait) {
    // 0: woken. EAGAIN: the word changed before the wait began. ECANCELED:
    // the linked timeout fired or Cancel() asked. Either way, look again.
    if (res == 0 || res == -EAGAIN || res == -ECANCELED || res == -EINTR) {
      OnWaitEnded(*op, res == 0);
    } else {
      op->armed = false;
      if (!op->finished) {
        Finish(*op, ErrnoError(-res, op->lock->store().Describe(),
                               op->lock->resource(), "io_uring futex wait"));
      }
    }
  }
  MaybeForget(op->id);
}

void AsyncWaiterImpl::OnJobResult(WaitJobResult r) {
  Op* op = Find(r.id);
  if (op == nullptr) return;
  --op->outstanding;
  if (op->path == Path::kFutexThread) {
    if (!r.status.ok()) {  // cancelled before it slept
      OnWaitEnded(*op, false);
    } else if (r.futex_rc == 0 || r.futex_rc == EAGAIN || r.futex_rc == ETIMEDOUT) {
      OnWaitEnded(*op, r.futex_rc == 0);
    } else {
      op->armed = false;
      if (!op->finished) {
        Finish(*op, ErrnoError(r.futex_rc, op->lock->store().Describe(),
                               op->lock->resource(), "futex wait"));
      }
    }
  } else {
    op->armed = false;
    if (op->finished) {
      // Cancel() already settled it; a lock the helper got is not wanted.
      if (r.status.ok()) op->lock->Release().IgnoreError();
    } else if (r.status.ok() && op->cancel_requested) {
      absl::Status released = op->lock->Release();
      Finish(*op, released.ok() ? CancelledStatus() : released);
    } else if (r.status.code() == absl::StatusCode::kDeadlineExceeded) {
      // The helper's message names its last slice; ours names the wait.
      Finish(*op, StoreError(absl::StatusCode::kDeadlineExceeded,
                             op->lock->store().Describe(), op->lock->resource(),
                             absl::StrCat("still held by another owner after ",
                                          absl::FormatDuration(op->timeout),
                                          " (async wait)")));
    } else {
      Finish(*op, std::move(r.status));
    }
  }
  MaybeForget(op->id);
}

void AsyncWaiterImpl::MaybeForget(AsyncId id) {
  auto it = ops_.find(id);
  if (it != ops_.end() && it->second->delivered && it->second->outstanding == 0) {
    ops_.erase(it);
  }
}

size_t AsyncWaiterImpl::ProcessReady() {
  // Nothing signalled: then there is nothing to do, but draining costs
  // little, so no early return.
  signal_.Drain();
  if (ring_ != nullptr) {
    ring_->Drain([this](uint64_t data, int res) { OnCompletion(data, res); });
  }
  if (threads_ != nullptr) {
    for (WaitJobResult& r : threads_->TakeResults()) OnJobResult(std::move(r));
  }
  std::vector<AsyncId> ready;
  ready.swap(ready_);
  size_t ran = 0;
  for (AsyncId id : ready) {
    Op* op = Find(id);
    if (op == nullptr || op->delivered) continue;
    op->delivered = true;
    --pending_;
    busy_.erase(op->lock);
    AsyncResult result;
    result.id = id;
    result.status = op->result;
    result.lock = op->lock;
    AsyncCallback done = std::move(op->done);
    MaybeForget(id);  // `op` may be gone from here on
    if (done) done(result);
    ++ran;
  }
  return ran;
}

absl::Status AsyncWaiterImpl::Cancel(AsyncId id) {
  Op* op = Find(id);
  if (op == nullptr || op->delivered) {
    return absl::NotFoundError(
        absl::StrCat("ipclock: AsyncWaiter::Cancel: no pending async wait ", id));
  }
  if (op->finished) {
    // Its callback has not run yet: it reports Cancelled instead, and a lock
    // it got is given back first.
    if (op->result.ok()) {
      absl::Status released = op->lock->Release();
      op->result = released.ok() ? CancelledStatus() : released;
    } else {
      op->result = CancelledStatus();
    }
    return absl::OkStatus();
  }
  if (op->cancel_requested) return absl::OkStatus();
  op->cancel_requested = true;
  if (!op->armed) {
    Finish(*op, CancelledStatus());
  } else if (op->path == Path::kRing) {
    // The wait ends with ECANCELED (or 0 if a wake won the race; the wake
    // is then passed on) and OnWaitEnded() reports Cancelled.
    absl::Status s = ring_->Cancel(RingData(id, kTagWait), RingData(id, kTagCancel));
    if (!s.ok()) return s;  // it still ends, at its deadline or a wake
    ++op->outstanding;
  } else {
    threads().Cancel(id);
  }
  return absl::OkStatus();
}

}  // namespace

AsyncWaiter::~AsyncWaiter() = default;

absl::StatusOr<std::unique_ptr<AsyncWaiter>> AsyncWaiter::Create(
    const AsyncWaiterOptions& options) {
  absl::StatusOr<EventSignal> signal = EventSignal::Create("async");
  if (!signal.ok()) return signal.status();
  AsyncWaiterOptions::Backend backend = options.backend;
  if (backend == AsyncWaiterOptions::Backend::kAuto && FallbackForcedByEnv()) {
    backend = AsyncWaiterOptions::Backend::kThreads;
  }
  std::unique_ptr<FutexRing> ring;
  if (backend != AsyncWaiterOptions::Backend::kThreads) {
    absl::StatusOr<std::unique_ptr<FutexRing>> made =
        FutexRing::Create(signal->fd(), options.ring_entries);
    if (made.ok()) {
      ring = *std::move(made);
    } else if (backend == AsyncWaiterOptions::Backend::kIoUring) {
      return made.status();
    } else {
      ReportFallbackOnce(made.status());
    }
  }
  return std::unique_ptr<AsyncWaiter>(new AsyncWaiterImpl(*std::move(signal), std::move(ring)));
}

}  // namespace ipclock
