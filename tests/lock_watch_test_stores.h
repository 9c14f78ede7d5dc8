// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Test stores of lock_watch_test: the in-memory store with faults of the
// watch's concern (refreshes that fail, checks that are counted, say the key
// is gone, or cannot answer) injected on demand.
//
#ifndef IPCLOCK_TESTS_LOCK_WATCH_TEST_STORES_H_
#define IPCLOCK_TESTS_LOCK_WATCH_TEST_STORES_H_

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/lock_watch.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/stores/in_memory_store.h"
#include "forwarding_store.h"
#include "test_util.h"  // pulls in cmocka.h

namespace ipclock_test {

// The in-memory store with refreshes that fail on demand, as a store whose
// server went away would: a fault injected into a real store, for the
// watch's handling of a renewal that fails and then a lease that runs out.
// (A real Redis server stopped under a watched lock is in redis_store_test.)
class FailingRefreshStore final : public ForwardingStore {
 public:
  FailingRefreshStore() : ForwardingStore("failing-refresh", ipclock::NewInMemoryStore()) {}
  absl::Status Extend(ipclock::Key& key, absl::Duration ttl) override {
    ++refreshes;
    if (fail) return absl::UnavailableError("failing-refresh: connection refused");
    return ipclock::StoreCalls::Extend(inner(), key, ttl);
  }
  absl::StatusOr<bool> IsHeld(ipclock::Key& key) override {
    if (gone) return false;
    return ForwardingStore::IsHeld(key);
  }

  std::atomic<bool> fail{false};
  // The key vanished from the store (as a key deleted on a server does): no
  // event tells of it, only a check finds it.
  std::atomic<bool> gone{false};
  std::atomic<int> refreshes{0};
};

// The in-memory store with its checks counted and timed, and, with
// `tells`, a pipe that stands for a server's word on every loss (as
// ZooKeeper's node watch and session events): for how often the watch
// checks, which only the store can see.
class CountedCheckStore final : public ForwardingStore {
 public:
  explicit CountedCheckStore(bool tells)
      : ForwardingStore("counted-check", ipclock::NewInMemoryStore()), tells_(tells) {
    assert_int_equal(pipe2(bell_, O_NONBLOCK | O_CLOEXEC), 0);
  }
  // Counts the checks of a real store, whose watch targets it passes on.
  explicit CountedCheckStore(std::shared_ptr<ipclock::Store> inner)
      : ForwardingStore("counted-check", std::move(inner)), tells_(false), forward_targets_(true) {
    assert_int_equal(pipe2(bell_, O_NONBLOCK | O_CLOEXEC), 0);
  }
  ~CountedCheckStore() override {
    close(bell_[0]);
    close(bell_[1]);
  }
  absl::Status CheckHeld(ipclock::Key& key) override {
    {
      std::lock_guard<std::mutex> guard(mu);
      checks.push_back(NowSeconds());
    }
    // Drained first, as a server's bell is: a word from now on fires again.
    char drained[16];
    while (read(bell_[0], drained, sizeof(drained)) > 0) {
    }
    if (gone) return absl::AbortedError("counted-check: the key is gone");
    if (unsure) return absl::UnavailableError("counted-check: no answer");
    return ipclock::StoreCalls::CheckHeld(inner(), key);
  }
  ipclock::WatchTargets GetWatchTargets(ipclock::Key& key) override {
    ipclock::WatchTargets targets;
    if (forward_targets_) targets = ipclock::StoreCalls::GetWatchTargets(inner(), key);
    if (tells_) {
      targets.poll_fds.push_back(bell_[0]);
      targets.poll_fds_tell_all = true;
    }
    return targets;
  }
  void Ring() { assert_int_equal(write(bell_[1], "x", 1), 1); }
  // The checks made from `since` on.
  std::vector<double> ChecksSince(double since) {
    std::lock_guard<std::mutex> guard(mu);
    std::vector<double> out;
    for (double t : checks) {
      if (t >= since) out.push_back(t);
    }
    return out;
  }

  std::atomic<bool> gone{false};
  std::atomic<bool> unsure{false};
  std::mutex mu;
  std::vector<double> checks;  // guarded by mu

 private:
  const bool tells_;
  const bool forward_targets_ = false;
  int bell_[2];
};

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_LOCK_WATCH_TEST_STORES_H_
