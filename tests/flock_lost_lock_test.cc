// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A flock lock lost while held: its lock file deleted, its lock dir removed
// (rm -rf), renamed away by the user who owns the dir above it, or a dir
// further up renamed. Each loss is done by another process to a held lock;
// the holder must hear of it from Lock::CheckAcquired(), from its release,
// and from a LockWatch: at once through inotify for the file's and the
// dir's own events (the watch's interval is a minute, so a report within
// seconds can only have come from inotify), and within the interval for a
// dir further up. A vanished dir is made anew only once no lock of the store
// is held in the old one.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "flock_test_util.h"
#include "loss_log.h"  // last: it pulls in cmocka.h

namespace {

using namespace ipclock_test;
using ipclock::Lock;
using ipclock::LockWatch;
using ipclock::WatchedLock;

void ExpectLost(const absl::Status& s, const std::string& what) {
  if (!absl::IsAborted(s) || !absl::StrContains(s.message(), what)) {
    fail_msg("expected Aborted with \"%s\", got %s", what.c_str(), s.ToString().c_str());
  }
}

// A release checks again only when the last check is more than 1 ms old
// (flock_store.h, "What is checked, and when"); the loss must fall before.
void PastTheCheckInterval() { usleep(3000); }

void FileDeletedWhileHeld(void**) {
  const std::string dir = MakeTempDir();
  auto store = FlockStoreIn(dir);
  const std::string r = UniqueResource("deleted");
  Lock held = HeldOrFail(store, r);
  assert_true(Shell(absl::StrCat("rm '", FlockFileOf(dir, r), "'")));
  // The deletion broke exclusion: another process locks a new file at the
  // path beside us.
  assert_int_equal(WaitChild(ForkChild([&] {
                     auto own = FlockStoreIn(dir);
                     absl::StatusOr<Lock> l = Lock::Create(own, r);
                     return l.ok() && l->TryAcquire().value_or(false) ? 0 : 1;
                   })),
                   0);
  ExpectLost(held.CheckAcquired(), absl::StrCat("lock file ", FlockFileOf(dir, r), " was deleted"));
  assert_false(held.is_acquired());  // the check let it go

  Lock released = LockOrFail(store, r);  // a new file now
  assert_true(TryOrFail(released));
  assert_true(Shell(absl::StrCat("rm '", FlockFileOf(dir, r), "'")));
  PastTheCheckInterval();
  ExpectLost(released.Release(), "was deleted");
  // Nothing is left held: a new Lock gets the path's new file.
  Lock again = LockOrFail(store, r);
  TakeAndRelease(again);
}

// A file renamed over ours (a new file replaces it at the path).
void FileReplacedWhileHeld(void**) {
  const std::string dir = MakeTempDir();
  auto store = FlockStoreIn(dir);
  const std::string r = UniqueResource("replaced");
  Lock held = HeldOrFail(store, r);
  assert_true(Shell(absl::StrCat("touch '", dir, "/new' && mv '", dir, "/new' '", FlockFileOf(dir, r), "'")));
  ExpectLost(held.CheckAcquired(), "was deleted");  // the old one has no name left

  Lock moved = HeldOrFail(store, r);
  assert_true(Shell(absl::StrCat("mv '", FlockFileOf(dir, r), "' '", dir, "/elsewhere'")));
  ExpectLost(moved.CheckAcquired(), "was renamed or replaced");
}

void DirRemovedWhileHeld(void**) {
  const std::string dir = MakeTempDir() + "/locks";
  auto store = FlockStoreIn(dir);
  const std::string r = UniqueResource("rm-rf");
  Lock held = HeldOrFail(store, r);
  assert_true(Shell(absl::StrCat("rm -rf '", dir, "'")));
  // While a lock of this store is held in the removed dir, the store does
  // not make a new one: its own locks would not exclude the held one.
  Lock other = LockOrFail(store, UniqueResource("other"));
  absl::StatusOr<bool> refused = other.TryAcquire();
  ASSERT_CODE(refused, absl::StatusCode::kUnavailable);
  assert_true(absl::StrContains(refused.status().message(), "1 lock of this store"));
  struct stat st;
  assert_int_not_equal(stat(dir.c_str(), &st), 0);

  ExpectLost(held.CheckAcquired(), absl::StrCat("lock dir ", dir, " was removed"));
  // Now nothing is held in it: the dir is made anew, private as before.
  assert_true(TryOrFail(other));
  assert_int_equal(stat(dir.c_str(), &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  ASSERT_OK(other.Release());

  Lock released = HeldOrFail(store, r);
  assert_true(Shell(absl::StrCat("rm -rf '", dir, "'")));
  PastTheCheckInterval();
  ExpectLost(released.Release(), "was removed");
}

// The user who owns the dir above the lock dir (nobody) renames it away:
// the holder is told, and the store will not make a new dir under a parent
// that is no longer safe.
void DirRenamedAwayByOwnerOfParent(void**) {
  SKIP_UNLESS_ROOT();
  const std::string top = MakeTempDir();
  assert_int_equal(chmod(top.c_str(), 0755), 0);
  const std::string parent = top + "/parent";
  assert_int_equal(mkdir(parent.c_str(), 0755), 0);
  const std::string dir = parent + "/locks";
  auto store = FlockStoreIn(dir);
  const std::string r = UniqueResource("renamed");
  Lock held = HeldOrFail(store, r);
  Lock released = HeldOrFail(store, UniqueResource("released"));
  assert_int_equal(chown(parent.c_str(), kNobodyUid, kNobodyUid), 0);
  assert_int_equal(AsNobody([&] {
                     return rename(dir.c_str(), (parent + "/away").c_str()) == 0 ? 0 : 1;
                   }),
                   0);
  ExpectLost(held.CheckAcquired(),
             absl::StrCat("lock dir ", dir, " was renamed or replaced"));
  PastTheCheckInterval();
  ExpectLost(released.Release(), "was renamed or replaced");
  Lock next = LockOrFail(store, r);
  absl::StatusOr<bool> refused = next.TryAcquire();
  ASSERT_CODE(refused, absl::StatusCode::kPermissionDenied);
  assert_true(absl::StrContains(refused.status().message(),
                                absl::StrCat("its ancestor ", parent, " (owner uid 65534")));
}

void AncestorRenamedWhileHeld(void**) {
  const std::string base = MakeTempDir();
  const std::string dir = base + "/a/locks";
  auto store = FlockStoreIn(dir);
  const std::string r = UniqueResource("ancestor");
  Lock held = HeldOrFail(store, r);
  assert_true(Shell(absl::StrCat("mv '", base, "/a' '", base, "/b'")));
  ExpectLost(held.CheckAcquired(),
             absl::StrCat("lock dir ", dir, " was renamed or replaced"));
  // The path is free: a new dir is made there; the moved one is left alone.
  Lock next = HeldOrFail(store, r);
  struct stat st;
  assert_int_equal(stat(FlockFileOf(dir, r).c_str(), &st), 0);
  assert_int_equal(stat(FlockFileOf(base + "/b/locks", r).c_str(), &st), 0);
  // Released after the same loss: the release says so.
  assert_true(Shell(absl::StrCat("mv '", base, "/a' '", base, "/c'")));
  PastTheCheckInterval();
  ExpectLost(next.Release(), absl::StrCat("lock dir ", dir, " was renamed or replaced"));
}

// Exact-path mode (`ipclock run --file`): the same checks for the named
// file, absolute or relative to the store's dir.
void ExactPathLost(void**) {
  const std::string dir = MakeTempDir();
  ipclock::FlockStoreOptions options;
  options.naming = ipclock::FlockStoreOptions::Naming::kPath;
  auto anywhere = FlockStoreIn("", options);
  const std::string path = dir + "/job.lock";
  Lock absolute = HeldOrFail(anywhere, path);
  assert_true(Shell(absl::StrCat("rm '", path, "'")));
  ExpectLost(absolute.CheckAcquired(), absl::StrCat("lock file ", path, " was deleted"));

  const std::string sub = dir + "/sub";
  auto under = FlockStoreIn(sub, options);
  Lock relative = HeldOrFail(under, "job.lock");
  assert_true(Shell(absl::StrCat("mv '", sub, "/job.lock' '", sub, "/moved.lock'")));
  PastTheCheckInterval();
  ExpectLost(relative.Release(), absl::StrCat("lock file ", sub, "/job.lock was renamed or replaced"));
  Lock again = HeldOrFail(under, "job.lock");
  assert_true(Shell(absl::StrCat("mv '", sub, "' '", dir, "/sub2'")));
  ExpectLost(again.CheckAcquired(), absl::StrCat("lock dir ", sub, " was renamed or replaced"));
}

// --- The watch ----------------------------------------------------------------

// Watches a held lock in `dir` with a one-minute interval, does `lose` to
// it, and returns how long the watch took to report it (µs). A report
// within 20 s can only have come from inotify.
double NoticedAfterMicros(const std::string& dir, const std::string& r,
                          const std::function<void()>& lose, const std::string& what) {
  auto store = FlockStoreIn(dir);
  Lock lock = HeldOrFail(store, r);
  LossLog report;
  LockWatch watch;
  WatchedLock watched = report.Watch(watch, std::move(lock), absl::Minutes(1));
  usleep(20 * 1000);  // the watch's thread is asleep in poll(2) by now
  const double start = NowSeconds();
  lose();
  if (!report.WaitUntil(start + 20)) fail_msg("%s: not reported within 20 s", what.c_str());
  ExpectLost(watched.status(), what);
  assert_int_equal(report.size(), 1);
  ExpectLost(report.first().status, what);
  ExpectLost(watched.Release(), what);
  return (report.first_at() - start) * 1e6;
}

void PrintLatency(const char* what, std::vector<double> micros) {
  std::sort(micros.begin(), micros.end());
  fprintf(stderr, "inotify: %s reported after %.0f µs (median of %zu; max %.0f µs)\n", what,
          micros[micros.size() / 2], micros.size(), micros.back());
}

void WatchReportsAtOnce(void**) {
  constexpr int kTrials = 7;
  std::vector<double> file_deleted, dir_removed, dir_renamed;
  for (int i = 0; i < kTrials; ++i) {
    const std::string base = MakeTempDir();
    const std::string dir = base + "/locks";
    const std::string r = UniqueResource("watched");
    file_deleted.push_back(NoticedAfterMicros(
        dir, r, [&] { assert_int_equal(unlink(FlockFileOf(dir, r).c_str()), 0); },
        "was deleted"));
    dir_removed.push_back(NoticedAfterMicros(
        dir, r,
        [&] {
          // What rm -rf does: the files, then the dir.
          assert_int_equal(unlink(FlockFileOf(dir, r).c_str()), 0);
          assert_int_equal(rmdir(dir.c_str()), 0);
        },
        "lock file"));  // the file goes first: either report is right
    dir_renamed.push_back(NoticedAfterMicros(
        dir, r,
        [&] {
          assert_int_equal(rename(dir.c_str(), (base + "/moved" + std::to_string(i)).c_str()),
                           0);
        },
        "was renamed or replaced"));
  }
  PrintLatency("lock file deleted", file_deleted);
  PrintLatency("lock dir removed (rm -rf)", dir_removed);
  PrintLatency("lock dir renamed", dir_renamed);
}

// A dir further up renamed produces no event on the lock file or dir: the
// interval check finds it.
void WatchFindsAncestorRenameAtItsInterval(void**) {
  const std::string base = MakeTempDir();
  const std::string dir = base + "/a/locks";
  auto store = FlockStoreIn(dir);
  Lock lock = HeldOrFail(store, UniqueResource("up"));
  LossLog report;
  LockWatch watch;
  WatchedLock watched = report.Watch(watch, std::move(lock), absl::Milliseconds(100));
  assert_int_equal(rename((base + "/a").c_str(), (base + "/b").c_str()), 0);
  assert_true(report.WaitUntil(NowSeconds() + 20));
  ExpectLost(watched.status(), absl::StrCat("lock dir ", dir, " was renamed or replaced"));
}

// The holder is another process, watching its lock as a daemon would; a
// third process removes the dir. The holder hears of it and stops.
void HolderProcessIsTold(void**) {
  const std::string dir = MakeTempDir() + "/locks";
  const std::string r = UniqueResource("daemon");
  Signal holding, told;
  pid_t holder = ForkChild([&] {
    auto store = FlockStoreIn(dir);
    absl::StatusOr<Lock> lock = Lock::Create(store, r);
    if (!lock.ok() || !lock->TryAcquire().value_or(false)) return 2;
    LossLog report;
    absl::StatusOr<WatchedLock> watched =
        LockWatch::Default().Watch(*std::move(lock), report.Options(absl::Minutes(1)));
    if (!watched.ok()) return 3;
    holding.Notify();
    if (!report.WaitUntil(NowSeconds() + 20)) return 4;
    told.Notify();
    return absl::StrContains(watched->status().message(), dir) ? 0 : 5;
  });
  assert_int_equal(holding.Wait(), 'x');
  assert_true(Shell(absl::StrCat("rm -rf '", dir, "'")));
  assert_int_equal(told.Wait(20), 'x');
  assert_int_equal(WaitChild(holder), 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(FileDeletedWhileHeld),
      cmocka_unit_test(FileReplacedWhileHeld),
      cmocka_unit_test(DirRemovedWhileHeld),
      cmocka_unit_test(DirRenamedAwayByOwnerOfParent),
      cmocka_unit_test(AncestorRenamedWhileHeld),
      cmocka_unit_test(ExactPathLost),
      cmocka_unit_test(WatchReportsAtOnce),
      cmocka_unit_test(WatchFindsAncestorRenameAtItsInterval),
      cmocka_unit_test(HolderProcessIsTold),
  };
  return cmocka_run_group_tests_name("flock_lost_lock", tests, nullptr, nullptr);
}
