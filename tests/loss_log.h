// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The diagnostics one watch reports (WatchOptions::diagnostics), each with
// when it came, for the suites of lost locks. Include it last: it ends with
// test_util.h, which pulls in cmocka.h.

#ifndef IPCLOCK_TESTS_LOSS_LOG_H_
#define IPCLOCK_TESTS_LOSS_LOG_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "absl/time/time.h"
#include "ipclock/lock_watch.h"
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

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_LOSS_LOG_H_
