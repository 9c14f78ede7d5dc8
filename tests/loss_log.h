// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The diagnostics one watch reports (WatchOptions::diagnostics), each with
// when it came, for the suites of lost locks. Include it last: it ends with
// test_util.h, which pulls in cmocka.h.

#ifndef IPCLOCK_TESTS_LOSS_LOG_H_
#define IPCLOCK_TESTS_LOSS_LOG_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ipclock/diagnostics.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

class LossLog {
 public:
  // Options for a watch that checks every `interval` and reports here.
  ipclock::WatchOptions Options(absl::Duration interval) {
    ipclock::WatchOptions o;
    o.check_interval = interval;
    o.diagnostics = [this](const ipclock::Diagnostic& loss) {
      std::lock_guard<std::mutex> guard(mu_);
      seen_.push_back(loss);
      at_.push_back(NowSeconds());
      cv_.notify_all();
    };
    return o;
  }
  // `lock`, held, handed to `watch` with Options(interval): the watched
  // lock, or a failed test if the watch refuses it.
  ipclock::WatchedLock Watch(ipclock::LockWatch& watch, ipclock::Lock lock,
                             absl::Duration interval) {
    absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(lock), Options(interval));
    if (!watched.ok()) fail_msg("LockWatch::Watch: %s", watched.status().ToString().c_str());
    return *std::move(watched);
  }
  // Waits until a loss is reported or `until` (seconds, NowSeconds) passes.
  bool WaitUntil(double until) {
    std::unique_lock<std::mutex> lock(mu_);
    while (seen_.empty()) {
      const double left = until - NowSeconds();
      if (left <= 0) return false;
      cv_.wait_for(lock, std::chrono::duration<double>(left));
    }
    return true;
  }
  size_t size() {
    std::lock_guard<std::mutex> guard(mu_);
    return seen_.size();
  }
  // The first report, and when it came; fails the test if none came.
  ipclock::Diagnostic first() {
    std::lock_guard<std::mutex> guard(mu_);
    if (seen_.empty()) fail_msg("no loss was reported");
    return seen_[0];
  }
  double first_at() {
    std::lock_guard<std::mutex> guard(mu_);
    if (at_.empty()) fail_msg("no loss was reported");
    return at_[0];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ipclock::Diagnostic> seen_;
  std::vector<double> at_;
};

// A batch of held locks watched together, for the tests that a store
// checks all of its locks in one request: `n` locks of `store` on
// resources UniqueResource(`tag`), each held (HeldOrFail) and watched with
// a check every `interval`. Lock i is on names[i], watched as held[i];
// lost_at[i] is when its loss was reported (absl::GetCurrentTimeNanos), 0
// until then.
struct WatchedBatch {
  WatchedBatch(size_t n, const std::shared_ptr<ipclock::Store>& store, const char* tag,
               absl::Duration interval)
      : lost_at(n) {
    for (size_t i = 0; i < n; ++i) {
      names.push_back(UniqueResource(tag));
      ipclock::WatchOptions options;
      options.check_interval = interval;
      std::atomic<int64_t>* mine = &lost_at[i];
      options.diagnostics = [mine](const ipclock::Diagnostic& loss) {
        if (absl::IsAborted(loss.status)) *mine = absl::GetCurrentTimeNanos();
      };
      absl::StatusOr<ipclock::WatchedLock> w =
          watch.Watch(HeldOrFail(store, names.back()), options);
      ASSERT_OK(w);
      held.push_back(*std::move(w));
    }
  }

  std::vector<std::string> names;
  std::vector<std::atomic<int64_t>> lost_at;
  std::vector<ipclock::WatchedLock> held;
  ipclock::LockWatch watch;
};

// The end of a test that watches a batch of locks and loses the first
// `lost` of them: no other one was reported lost (`reported(i)`), each
// other one is still held and lets go cleanly, and the lost ones are let go
// of quietly (their release would report the loss again).
inline void ExpectOnlyFirstLost(std::vector<ipclock::WatchedLock>& held, size_t lost,
                                const std::function<bool(size_t i)>& reported) {
  for (size_t i = lost; i < held.size(); ++i) {
    if (reported(i)) fail_msg("lock %zu of %zu was reported lost", i, held.size());
    ASSERT_OK(held[i].CheckNow());
    ASSERT_OK(held[i].Release());
  }
  ipclock::DiagnosticSink quiet = ipclock::SetDefaultDiagnosticSink(nullptr);
  for (size_t i = 0; i < lost; ++i) held[i].Release().IgnoreError();
  ipclock::SetDefaultDiagnosticSink(quiet);
}

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_LOSS_LOG_H_
