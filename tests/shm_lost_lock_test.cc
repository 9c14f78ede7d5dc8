// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Losing a held shm lock, as it happens: the segment removed by rm(1) (what
// systemd-logind's RemoveIPC does at logout) while a process holds a lock in
// it and a process started afterwards takes "the same" lock on a new
// segment; the segment replaced or renamed; the owner thread exiting
// without a release. The holder must be told: by its watch at once
// (inotify), by CheckAcquired(), and by its release.

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock/lock.h"
#include "ipclock/lock_factory.h"
#include "ipclock/lock_watch.h"
#include "ipclock/stores/shm_store.h"
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "shm_test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

// rm(1), as a user or a cleanup job would run it.
void RemoveWithRm(const std::string& path) {
  pid_t rm = Spawn({"rm", "-f", path});
  assert_int_equal(WaitPlain(rm), 0);
  struct stat st;
  assert_int_not_equal(stat(path.c_str(), &st), 0);
}

struct Report {
  std::atomic<int64_t> lost_at_ns{0};
  std::atomic<int> lost_calls{0};
  char lost_message[1024] = {};
  std::atomic<int> check_code{-1};
  char check_message[1024] = {};
  std::atomic<int> release_code{-1};
  char release_message[1024] = {};
  std::atomic<int> waiter_got{-1};
  std::atomic<int> waiter_check_code{-1};
  std::atomic<int> newcomer_got{-1};
};

void CopyMessage(const absl::Status& s, char (&out)[1024]) {
  snprintf(out, sizeof(out), "%s", std::string(s.message()).c_str());
}

// The scenario of a logout with RemoveIPC=yes, in four processes:
//   holder    holds "job" (watched) and "job2" (not watched) on segment 1;
//   waiter    opened segment 1 before the removal and waits for "job";
//   rm        removes /dev/shm/ipclock.NAME;
//   newcomer  starts afterwards, makes segment 2 and is granted "job".
// The holder must hear of the loss from its watch at once (the watch's
// interval is an hour, so only inotify can tell it), and from
// CheckAcquired() and from the release of "job2"; its releases must still
// let go of segment 1's mutexes, which the waiter then gets.
void RemovedSegmentIsReportedToTheHolderInAnotherProcess(void**) {
  const ScratchSegment segment("rm");
  const std::string& name = segment.name();
  const std::string path = ShmSegmentPath(name);
  Report* report = SharedMemory<Report>();
  Signal held, waiting, told;
  pid_t holder = ForkChild([&] {
    std::vector<Lock> held_locks = AcquiredInSegment(name, {"job", "job2"});
    if (held_locks.empty()) return 2;
    Lock& job = held_locks[0];
    Lock& job2 = held_locks[1];
    ipclock::LockWatch watch;
    ipclock::WatchOptions options;
    options.check_interval = absl::Hours(1);
    options.diagnostics = [report](const ipclock::Diagnostic& loss) {
      report->lost_at_ns = ipclock::Deadline::NowNanos();
      CopyMessage(loss.status, report->lost_message);
      report->lost_calls++;
    };
    absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(job), options);
    if (!watched.ok()) return 3;
    held.Notify();
    const double give_up = NowSeconds() + 30;
    while (report->lost_at_ns.load() == 0 && NowSeconds() < give_up) usleep(1000);
    if (report->lost_at_ns.load() == 0) return 4;
    absl::StatusOr<Lock> back = watched->Take();
    if (!back.ok()) return 5;
    absl::Status checked = back->CheckAcquired();
    report->check_code = static_cast<int>(checked.code());
    CopyMessage(checked, report->check_message);
    absl::Status released = job2.Release();
    report->release_code = static_cast<int>(released.code());
    CopyMessage(released, report->release_message);
    told.Notify();
    return 0;
  });
  assert_int_equal(held.Wait(), 'x');
  pid_t waiter = ForkChild([&] {
    absl::StatusOr<Lock> job = LockInSegment(name, "job");
    if (!job.ok()) return 2;
    waiting.Notify();
    absl::StatusOr<bool> got = job->TryAcquireFor(absl::Seconds(60));
    report->waiter_got = got.ok() && *got ? 1 : 0;
    if (got.ok() && *got) {
      report->waiter_check_code = static_cast<int>(job->CheckAcquired().code());
    }
    return 0;
  });
  assert_int_equal(waiting.Wait(), 'x');
  usleep(50 * 1000);  // the waiter is asleep on segment 1's mutex

  const int64_t removed_at = ipclock::Deadline::NowNanos();
  RemoveWithRm(path);
  pid_t newcomer = ForkChild([&] {
    absl::StatusOr<Lock> job = LockInSegment(name, "job");
    if (!job.ok()) return 2;
    absl::StatusOr<bool> got = job->TryAcquire();
    report->newcomer_got = got.ok() && *got ? 1 : 0;
    return 0;
  });
  assert_int_equal(WaitChild(newcomer), 0);
  // Nothing in segment 2 can know of segment 1: the newcomer is granted
  // the lock. That is why the holder must be told.
  assert_int_equal(report->newcomer_got.load(), 1);

  assert_int_equal(told.Wait(40), 'x');
  assert_int_equal(WaitChild(holder), 0);
  const double latency_ms = static_cast<double>(report->lost_at_ns - removed_at) / 1e6;
  fprintf(stderr, "the holder's watch reported the removal %.2f ms after rm started\n",
          latency_ms);
  assert_int_equal(report->lost_calls.load(), 1);
  const absl::Status lost(absl::StatusCode::kAborted, report->lost_message);
  AssertMessageHas(lost, path);
  AssertMessageHas(lost, "was removed");
  AssertMessageHas(lost, "RemoveIPC");
  AssertMessageHas(lost, "\"job\"");
  assert_int_equal(report->check_code.load(), static_cast<int>(absl::StatusCode::kAborted));
  AssertMessageHas(absl::AbortedError(report->check_message), "was removed");
  assert_int_equal(report->release_code.load(), static_cast<int>(absl::StatusCode::kAborted));
  AssertMessageHas(absl::AbortedError(report->release_message), "was removed");
  AssertMessageHas(absl::AbortedError(report->release_message), "\"job2\"");

  // The holder let go of segment 1's mutex: the waiter, still on segment 1,
  // got it, and is told at once that its segment is gone.
  assert_int_equal(WaitChild(waiter, 70), 0);
  assert_int_equal(report->waiter_got.load(), 1);
  assert_int_equal(report->waiter_check_code.load(),
                   static_cast<int>(absl::StatusCode::kAborted));
}

// Without a watch, a holder in another process learns of the removal from
// CheckAcquired() and from its release; a later acquisition through its
// store is refused.
void ReleaseAfterRemovalSaysSo(void**) {
  const std::string name = UniqueShmName("rel");
  const std::string path = ShmSegmentPath(name);
  struct Codes {
    std::atomic<int> release{-1};
    std::atomic<int> check{-1};
    std::atomic<int> again{-1};
  };
  Codes* codes = SharedMemory<Codes>();
  Signal held, removed;
  pid_t holder = ForkChild([&] {
    std::vector<Lock> ab = AcquiredInSegment(name, {"a", "b"});
    if (ab.empty()) return 2;
    Lock& a = ab[0];
    Lock& b = ab[1];
    held.Notify();
    if (removed.Wait(30) != 'x') return 3;
    // No check of this process has run since the removal: the release
    // itself finds it.
    codes->release = static_cast<int>(a.Release().code());
    codes->check = static_cast<int>(b.CheckAcquired().code());
    codes->again = static_cast<int>(a.TryAcquire().status().code());
    return 0;
  });
  assert_int_equal(held.Wait(), 'x');
  RemoveWithRm(path);
  // Releases check the link at most once per second of the wall clock.
  usleep(2100 * 1000);
  removed.Notify();
  assert_int_equal(WaitChild(holder), 0);
  assert_int_equal(codes->release.load(), static_cast<int>(absl::StatusCode::kAborted));
  assert_int_equal(codes->check.load(), static_cast<int>(absl::StatusCode::kAborted));
  assert_int_equal(codes->again.load(), static_cast<int>(absl::StatusCode::kFailedPrecondition));
}

// The path names another segment now, or ours under another name.
void ReplacedOrRenamedSegmentIsALoss(void**) {
  const std::string name = UniqueShmName("repl");
  const std::string path = ShmSegmentPath(name);
  {
    std::shared_ptr<Store> store = OpenShmStore(absl::StrCat("shm://", name));
    Lock lock = HeldOrFail(store, "job");
    ASSERT_OK(lock.CheckAcquired());
    assert_int_equal(unlink(path.c_str()), 0);
    std::shared_ptr<Store> newer = OpenShmStore(absl::StrCat("shm://", name));  // a new segment there
    absl::Status s = lock.CheckAcquired();
    ASSERT_CODE(s, absl::StatusCode::kAborted);
    AssertMessageHas(s, path);
    AssertMessageHas(s, "replaced");
  }
  ASSERT_OK(ipclock::RemoveShmSegment(name));

  const std::string other = UniqueShmName("moved");
  std::shared_ptr<Store> store = OpenShmStore(absl::StrCat("shm://", name));
  Lock lock = HeldOrFail(store, "job");
  assert_int_equal(rename(path.c_str(), ShmSegmentPath(other).c_str()), 0);
  absl::Status s = lock.CheckAcquired();
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  AssertMessageHas(s, "renamed");
  ASSERT_OK(ipclock::RemoveShmSegment(other));
}

// A healthy segment is never reported, however often it is asked.
void NoFalseAlarmOnAHealthySegment(void**) {
  const ScratchSegment segment("healthy");
  const std::string& name = segment.name();
  std::shared_ptr<Store> store = OpenShmStore(absl::StrCat("shm://", name));
  Lock lock = HeldOrFail(store, "job");
  for (int i = 0; i < 10000; ++i) ASSERT_OK(lock.CheckAcquired());
  ASSERT_OK(lock.Release());
  for (int i = 0; i < 1000; ++i) {
    TakeAndRelease(lock);
  }
}

// The owner thread exits holding the lock: the kernel hands the mutex to
// the next holder as an owner death, so this Lock no longer holds it, and
// a check from another thread (the watch's, here the test's) says so.
void OwnerThreadExitIsALoss(void**) {
  const ScratchSegment segment("thread");
  const std::string& name = segment.name();
  std::shared_ptr<Store> store = OpenShmStore(absl::StrCat("shm://", name));
  Lock lock = LockOrFail(store, "job");
  absl::StatusOr<bool> got;
  std::thread([&] { got = lock.TryAcquire(); }).join();
  ASSERT_OK(got);
  assert_true(*got);
  absl::Status s = lock.CheckAcquired();
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  AssertMessageHas(s, "exited");
  Lock next = HeldOrFail(store, "job");
  assert_true(next.previous_owner_died());
  ASSERT_OK(next.Release());
  // The first Lock can be used again, from this thread.
  TakeAndRelease(lock);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(RemovedSegmentIsReportedToTheHolderInAnotherProcess),
      cmocka_unit_test(ReleaseAfterRemovalSaysSo),
      cmocka_unit_test(ReplacedOrRenamedSegmentIsALoss),
      cmocka_unit_test(NoFalseAlarmOnAHealthySegment),
      cmocka_unit_test(OwnerThreadExitIsALoss),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
