// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/async_fallback.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/platform_deadline.h"
#include "platform/futex.h"
#include "platform/thread.h"

namespace ipclock {

namespace {

// How long a helper's blocking wait runs before it looks for a
// cancellation. Hand-over is not affected: the store's wait returns as soon
// as the holder releases.
constexpr absl::Duration kSlice = absl::Milliseconds(200);

// Helpers run the stores' waits and little else. Sanitizers need more.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kStackBytes = 1 << 20;
#else
constexpr size_t kStackBytes = 256 << 10;
#endif

bool Cancelled(const uint32_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE) != 0;
}

}  // namespace

WaitThreads::WaitThreads(const EventSignal* done) : done_(done) {}

WaitThreads::~WaitThreads() { Shutdown(); }

void WaitThreads::Shutdown() {
  std::vector<pthread_t> threads;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    for (auto& [id, a] : active_) {
      __atomic_store_n(&a->cancel_word, 1, __ATOMIC_RELEASE);
      FutexWake(&a->cancel_word, 1, /*shared=*/false);
    }
    threads.swap(threads_);
  }
  work_cv_.notify_all();
  for (pthread_t t : threads) JoinThread(t);
}

absl::Status WaitThreads::Submit(const WaitJob& job) {
  auto a = std::make_shared<Active>();
  a->job = job;
  std::unique_lock<std::mutex> l(mu_);
  active_[job.id] = a;
  queue_.push_back(std::move(a));
  // Every queued job needs a thread: an idle one, or a new one.
  if (idle_ >= queue_.size()) {
    l.unlock();
    work_cv_.notify_one();
    return absl::OkStatus();
  }
  // Helpers take no signals meant for the program (an event loop may read
  // them from a signalfd); the timed flock wait unblocks its own signal.
  pthread_t t;
  const absl::Status started =
      StartThread("ipclock-wait", [this] { Run(); }, &t, kStackBytes);
  if (!started.ok()) {
    queue_.pop_back();
    active_.erase(job.id);
    return absl::ResourceExhaustedError(absl::StrCat(
        "ipclock: async wait: no helper thread could be started: ", started.message()));
  }
  threads_.push_back(t);
  return absl::OkStatus();
}

void WaitThreads::Cancel(uint64_t id) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = active_.find(id);
  if (it == active_.end()) return;
  __atomic_store_n(&it->second->cancel_word, 1, __ATOMIC_RELEASE);
  FutexWake(&it->second->cancel_word, 1, /*shared=*/false);
}

std::vector<WaitJobResult> WaitThreads::TakeResults() {
  std::vector<WaitJobResult> out;
  std::lock_guard<std::mutex> l(mu_);
  out.swap(results_);
  return out;
}

size_t WaitThreads::running() const {
  std::lock_guard<std::mutex> l(mu_);
  return active_.size();
}

void WaitThreads::Run() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    while (queue_.empty() && !stopping_) {
      ++idle_;
      work_cv_.wait(l);
      --idle_;
    }
    if (queue_.empty()) return;  // stopping, and every job has been run
    std::shared_ptr<Active> a = std::move(queue_.front());
    queue_.pop_front();
    l.unlock();
    WaitJobResult r = a->job.kind == WaitJob::Kind::kFutex ? RunFutex(*a) : RunAcquire(*a);
    l.lock();
    active_.erase(a->job.id);
    results_.push_back(std::move(r));
    l.unlock();
    done_->Notify();
    l.lock();
  }
}

WaitJobResult WaitThreads::RunFutex(Active& a) {
  WaitJobResult r;
  r.id = a.job.id;
  for (;;) {
    if (Cancelled(&a.cancel_word)) {
      r.status = absl::CancelledError("ipclock: async wait cancelled");
      return r;
    }
    int rc = FutexWaitOrCancelUntil(a.job.word, a.job.expected, a.job.shared,
                                    &a.cancel_word, ForPlatform(a.job.deadline));
    if (rc == ENOSYS) {
      // Before Linux 5.16 there is no futex_waitv: sleep on the lock's word
      // alone, in slices, so that a cancellation is seen within one.
      Deadline slice = std::min(a.job.deadline, Deadline::In(kSlice));
      rc = FutexWaitUntil(a.job.word, a.job.expected, a.job.shared, ForPlatform(slice));
      if (rc == ETIMEDOUT && !a.job.deadline.has_passed()) continue;
    }
    if (rc == EINTR) continue;
    if (rc == ECANCELED) {
      r.status = absl::CancelledError("ipclock: async wait cancelled");
      return r;
    }
    r.futex_rc = rc;
    return r;
  }
}

WaitJobResult WaitThreads::RunAcquire(Active& a) {
  WaitJobResult r;
  r.id = a.job.id;
  Lock& lock = *a.job.lock;
  for (;;) {
    if (Cancelled(&a.cancel_word)) {
      r.status = absl::CancelledError("ipclock: async wait cancelled");
      return r;
    }
    const absl::Duration slice = std::min(a.job.deadline.Remaining(), kSlice);
    absl::Status s = lock.Acquire(slice, a.job.mode);
    if (s.ok()) {
      if (Cancelled(&a.cancel_word)) {
        // The acquisition raced the cancellation and won: give it back
        // here, so that the lock is free before Cancelled is reported.
        absl::Status released = lock.Release();
        r.status = released.ok() ? absl::CancelledError("ipclock: async wait cancelled")
                                 : released;
        return r;
      }
      r.status = absl::OkStatus();
      return r;
    }
    if (s.code() != absl::StatusCode::kDeadlineExceeded || a.job.deadline.has_passed()) {
      r.status = std::move(s);
      return r;
    }
  }
}

}  // namespace ipclock
