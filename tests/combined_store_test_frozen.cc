// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A combined lock with a member whose server is frozen (SIGSTOP), through a
// LockWatch: the loss that the other members prove is reported at once.

#include "ipclock_config.h"

#if IPCLOCK_HAVE_REDIS

#include <signal.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "combined_store_test.h"
#include "flock_test_util.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/stores/combined_store.h"
#include "redis_fixture.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

using ipclock::CombineStrategy;
using ipclock::Store;

namespace {

// When each watched lock's loss was reported, by resource.
class Reports {
 public:
  ipclock::DiagnosticSink Sink() {
    return [this](const ipclock::Diagnostic& d) {
      std::lock_guard<std::mutex> guard(mu_);
      at_.emplace_back(d.resource, NowSeconds());
    };
  }
  // Seconds from `since` to the report of `resource`; fails after 30 s.
  double Await(const std::string& resource, double since) {
    for (const double until = NowSeconds() + 30; NowSeconds() < until;) {
      {
        std::lock_guard<std::mutex> guard(mu_);
        for (const auto& [r, at] : at_) {
          if (r == resource) return at - since;
        }
      }
      absl::SleepFor(absl::Milliseconds(2));
    }
    fail_msg("the loss of %s was never reported", resource.c_str());
    return -1;  // not reached where fail_msg() is known not to return
  }
  size_t count() {
    std::lock_guard<std::mutex> guard(mu_);
    return at_.size();
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<std::string, double>> at_;
};

}  // namespace

// A member whose server is frozen (SIGSTOP: its socket accepts, nothing
// answers until the command timeout, 10 s here) holds up no loss that the
// other members prove: the lock file of a unanimous flock + Redis lock
// deleted is reported lost at once, as is a majority of three whose two
// flock members are lost. One lost flock member of three is no loss (the
// frozen member may still hold), and while that check waits for the frozen
// server, the watch's other locks are checked as usual.
void FrozenMemberHoldsUpNoLoss(void**) {
  RedisServer& own = OwnRedis();
  const std::string redis =
      WithOptions(own.dsn(), "secret=none&connect_timeout=0.5&command_timeout=10");
  const std::string dir[4] = {MakeTempDir(), MakeTempDir(), MakeTempDir(), MakeTempDir()};
  auto flock = [](const std::string& d) { return OpenStoreOrFail(absl::StrCat("flock://", d)); };
  absl::StatusOr<std::shared_ptr<Store>> unanimous = ipclock::NewCombinedStore(
      {OpenStoreOrFail(redis), flock(dir[0])}, CombineStrategy::kUnanimous);
  ASSERT_OK(unanimous);
  absl::StatusOr<std::shared_ptr<Store>> majority = ipclock::NewCombinedStore(
      {OpenStoreOrFail(redis), flock(dir[1]), flock(dir[2])}, CombineStrategy::kConsensus);
  ASSERT_OK(majority);
  const std::string r1 = UniqueResource("frozen-all"), r2 = UniqueResource("frozen-most"),
                    r3 = UniqueResource("bystander");
  Reports reports;
  ipclock::WatchOptions options;
  options.check_interval = absl::Milliseconds(100);
  options.diagnostics = reports.Sink();
  ipclock::LockWatch watch;
  absl::StatusOr<ipclock::WatchedLock> all =
      watch.Watch(MakeHeldLock(*unanimous, r1, absl::Seconds(60)), options);
  absl::StatusOr<ipclock::WatchedLock> most =
      watch.Watch(MakeHeldLock(*majority, r2, absl::Seconds(60)), options);
  absl::StatusOr<ipclock::WatchedLock> bystander =
      watch.Watch(HeldOrFail(flock(dir[3]), r3), options);
  ASSERT_OK(all);
  ASSERT_OK(most);
  ASSERT_OK(bystander);
  assert_int_equal(kill(own.pid(), SIGSTOP), 0);
  // Checks of both combined locks wait on the frozen server by now.
  absl::SleepFor(absl::Milliseconds(300));
  double t0 = NowSeconds();
  assert_int_equal(unlink(FlockFileOf(dir[0], r1).c_str()), 0);
  const double unanimous_took = reports.Await(r1, t0);
  assert_int_equal(unlink(FlockFileOf(dir[1], r2).c_str()), 0);
  t0 = NowSeconds();
  assert_int_equal(unlink(FlockFileOf(dir[3], r3).c_str()), 0);
  const double bystander_took = reports.Await(r3, t0);
  assert_int_equal(reports.count(), 2);  // one lost member of three: no loss
  t0 = NowSeconds();
  assert_int_equal(unlink(FlockFileOf(dir[2], r2).c_str()), 0);
  const double majority_took = reports.Await(r2, t0);
  print_message("latency with a frozen member (command timeout 10 s): unanimous %.1f ms, "
                "majority %.1f ms; another lock of the watch %.1f ms\n",
                unanimous_took * 1e3, majority_took * 1e3, bystander_took * 1e3);
  kill(own.pid(), SIGCONT);
  for (double took : {unanimous_took, majority_took, bystander_took}) assert_true(took < 2);
  ASSERT_CODE(all->Release(), absl::StatusCode::kAborted);
  ASSERT_CODE(most->Release(), absl::StatusCode::kAborted);
  ASSERT_CODE(bystander->Release(), absl::StatusCode::kAborted);
}

}  // namespace ipclock_test

#endif  // IPCLOCK_HAVE_REDIS
