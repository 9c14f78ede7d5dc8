// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The watch across fork(): a child watches its own locks, and a child's
// copy of its parent's WatchedLock neither waits for the parent's watch
// (whose threads did not come along, and may have held the lock's mutex at
// the fork) nor lets go of what the parent holds.

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/stores/flock_store.h"
#include "flock_test_util.h"
#include "forwarding_store.h"
#include "lock_watch_test.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

using ipclock::Lock;
using ipclock::LockWatch;
using ipclock::WatchedLock;
using ipclock::WatchOptions;

// A flock store whose next check, once armed, stops until resumed: the
// watch's thread then sits inside a check, holding the lock's mutex.
class StalledCheckStore final : public ForwardingStore {
 public:
  explicit StalledCheckStore(std::shared_ptr<ipclock::Store> inner)
      : ForwardingStore("stalled-check", std::move(inner)) {
    assert_int_equal(pipe2(entered_, O_CLOEXEC), 0);
    assert_int_equal(pipe2(go_, O_CLOEXEC), 0);
  }
  ~StalledCheckStore() override {
    for (int fd : {entered_[0], entered_[1], go_[0], go_[1]}) close(fd);
  }
  absl::Status CheckHeld(ipclock::Key& key) override {
    if (armed_.exchange(false)) {
      char c = 'x';
      assert_int_equal(write(entered_[1], &c, 1), 1);
      assert_int_equal(read(go_[0], &c, 1), 1);
    }
    return ipclock::StoreCalls::CheckHeld(inner(), key);
  }

  void Arm() { armed_ = true; }
  // Waits until the armed check has started (fails the test after 10 s).
  void WaitUntilStalled() {
    struct pollfd p = {entered_[0], POLLIN, 0};
    assert_int_equal(poll(&p, 1, 10 * 1000), 1);
    char c;
    assert_int_equal(read(entered_[0], &c, 1), 1);
  }
  void Resume() { assert_int_equal(write(go_[1], "x", 1), 1); }

 private:
  std::atomic<bool> armed_{false};
  int entered_[2];
  int go_[2];
};

}  // namespace

// A child of a process whose default watch runs gets a watch of its own.
void ForkedChildWatchesItsOwnLocks(void**) {
  const std::string dir = MakeTempDir();
  auto store = FlockStoreIn(dir);
  Lock parent_lock = HeldOrFail(store, "parent");
  WatchOptions fast;
  fast.check_interval = absl::Milliseconds(50);
  fast.diagnostics = [](const ipclock::Diagnostic&) {};
  absl::StatusOr<WatchedLock> parent = LockWatch::Default().Watch(std::move(parent_lock), fast);
  ASSERT_OK(parent);
  pid_t child = ForkChild([&] {
    absl::StatusOr<Lock> lock = Lock::Create(store, "child");
    if (!lock.ok() || !lock->TryAcquire().value_or(false)) return 2;
    absl::StatusOr<WatchedLock> watched = LockWatch::Default().Watch(*std::move(lock), fast);
    if (!watched.ok()) return 3;
    if (unlink(FlockFileOf(dir, "child").c_str()) != 0) return 4;
    for (int i = 0; i < 500 && !watched->lost(); ++i) usleep(10 * 1000);
    if (!watched->lost()) return 5;
    watched->Release().IgnoreError();
    return 0;  // the parent's WatchedLock is left alone: it is the parent's
  });
  assert_int_equal(WaitChild(child), 0);
  absl::SleepFor(absl::Milliseconds(200));
  assert_false(parent->lost());
  ASSERT_OK(parent->Release());
}

// fork() while the watch's thread is inside a check of a lock, holding its
// mutex: the child's copy of that mutex stays locked for good. The child's
// calls on its copy of the WatchedLock must not wait on it (a child that
// does is killed by its alarm), and its release must leave the parent's
// lock held.
void ForkedChildsCopyNeverWaitsForTheWatch(void**) {
  std::shared_ptr<ipclock::Store> flock = FlockStoreIn(MakeTempDir());
  auto store = std::make_shared<StalledCheckStore>(flock);
  LockWatch watch;
  Lock lock = HeldOrFail(store, "stalled");
  WatchOptions fast;
  fast.check_interval = absl::Milliseconds(10);
  fast.diagnostics = [](const ipclock::Diagnostic&) {};
  store->Arm();
  absl::StatusOr<WatchedLock> watched = watch.Watch(std::move(lock), fast);
  ASSERT_OK(watched);
  store->WaitUntilStalled();
  pid_t child = ForkChild([&] {
    alarm(10);
    if (watched->lost()) return 2;
    if (!watched->status().ok()) return 3;
    if (watched->CheckNow().code() != absl::StatusCode::kFailedPrecondition) return 4;
    watched->Release().IgnoreError();  // a child's copy of a flock lock: lets go of nothing
    if (watched->Release().code() != absl::StatusCode::kFailedPrecondition) return 5;
    return 0;
  });
  const int code = WaitChild(child);
  store->Resume();
  assert_int_equal(code, 0);
  Lock rival = LockOrFail(flock, "stalled");
  assert_false(TryOrFail(rival));  // still the parent's
  assert_false(watched->lost());
  ASSERT_OK(watched->Release());
  TakeAndRelease(rival);
}

}  // namespace ipclock_test
