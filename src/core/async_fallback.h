// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The helper threads of AsyncWaiter (see ipclock/async.h for when they are
// used and why one thread per pending wait).
//
// Two kinds of job:
//   * kFutex: sleep on a futex word until it changes or is woken, the
//     deadline passes, or the job is cancelled. The loop's thread then tries
//     the lock itself (shm locks belong to the thread that takes them).
//   * kAcquire: run Lock::Acquire() in slices of at most 200 ms until it
//     succeeds, fails, the deadline passes or the job is cancelled; a lock
//     acquired after a cancellation is released on the helper thread.
// Each result is queued and the event signal notified; the loop's thread takes
// the results with TakeResults(). The queue's mutex is what orders a
// helper's use of a Lock before the loop's (ThreadSanitizer sees it).

#ifndef IPCLOCK_CORE_ASYNC_FALLBACK_H_
#define IPCLOCK_CORE_ASYNC_FALLBACK_H_

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/lock.h"
#include "ipclock/spi/store_interface.h"
#include "platform/event_signal.h"

namespace ipclock {

struct WaitJob {
  enum class Kind : uint8_t { kFutex, kAcquire };
  uint64_t id = 0;
  Kind kind = Kind::kFutex;
  Deadline deadline = Deadline::Never();
  // kFutex
  uint32_t* word = nullptr;
  uint32_t expected = 0;
  bool shared = true;
  // kAcquire
  Lock* lock = nullptr;
  LockMode mode = LockMode::kExclusive;
};

struct WaitJobResult {
  uint64_t id = 0;
  // kFutex: the futex wait's errno (0 woken or changed, ETIMEDOUT, ...).
  int futex_rc = 0;
  // kAcquire: OK (held), DeadlineExceeded, Cancelled (not held), or the
  // store's error.
  absl::Status status;
};

class WaitThreads {
 public:
  // Results are announced by `done->Notify()`; `done` outlives this.
  explicit WaitThreads(const EventSignal* done);
  WaitThreads(const WaitThreads&) = delete;
  WaitThreads& operator=(const WaitThreads&) = delete;
  // Shutdown().
  ~WaitThreads();

  // Cancels every job and joins every thread; their results stay for
  // TakeResults(). Submit() must not be called afterwards.
  void Shutdown();

  // Hands `job` to an idle thread, or to a new one. ResourceExhausted if no
  // thread could be started.
  absl::Status Submit(const WaitJob& job);

  // Makes job `id` end soon with a cancellation (a futex job at once, an
  // acquire job within a slice). A no-op for a job that has ended.
  void Cancel(uint64_t id);

  // The results queued since the last call.
  std::vector<WaitJobResult> TakeResults();

  // Jobs submitted whose results have not been queued.
  size_t running() const;

 private:
  struct Active {
    WaitJob job;
    // Set to 1 and woken to cancel; futex jobs sleep on it too.
    uint32_t cancel_word = 0;
  };

  void Run();
  WaitJobResult RunFutex(Active& a);
  WaitJobResult RunAcquire(Active& a);
  void Post(WaitJobResult result);

  const EventSignal* const done_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<std::shared_ptr<Active>> queue_;  // under mu_
  absl::flat_hash_map<uint64_t, std::shared_ptr<Active>> active_;  // under mu_
  std::vector<WaitJobResult> results_;  // under mu_
  std::vector<pthread_t> threads_;      // under mu_
  size_t idle_ = 0;                     // threads waiting for work; under mu_
  bool stopping_ = false;               // under mu_
};

}  // namespace ipclock

#endif  // IPCLOCK_CORE_ASYNC_FALLBACK_H_
