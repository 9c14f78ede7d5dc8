// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The POSIX semaphore store, beyond the conformance suite: names, DSN
// options, when the pair is made and removed (idle attachments kept by the
// store), a dead holder's permit coming back to a waiter within the
// documented bound, a live holder never reclaimed (stopped, or its main
// thread gone), a stolen wake-up taking no permit, counting between
// processes, the pair deleted, replaced or rewritten under a holder (with
// CheckAcquired, Release and LockWatch), registries of another version or
// planted FIFOs, creation failing at each system call or killed at random
// points leaving nothing behind, and a process scribbling over the registry
// while others use it. Foreign files and creation that fails are in
// posix_semaphore_test_foreign.cc, for length.

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock/lock.h"
#include "ipclock/stores/posix_semaphore_store.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "platform/faults.h"
#include "stores/posix_semaphore/posix_semaphore_page.h"
#include "stores/posix_semaphore/posix_semaphore_registry.h"
#include "posix_semaphore_test.h"
#include "semaphore_test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

std::shared_ptr<ipclock::Store> OpenStore(const std::string& dsn) { return OpenStoreOrFail(dsn); }

Paths PathsOf(const std::string& resource, absl::string_view prefix) {
  const std::string name = ipclock::PosixSemaphoreName(resource, prefix);
  return Paths{absl::StrCat("/dev/shm/sem.", name.substr(1)), absl::StrCat("/dev/shm", name, ".reg")};
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

bool ObjectsExist(const std::string& resource, absl::string_view prefix) {
  const Paths p = PathsOf(resource, prefix);
  return Exists(p.sem) || Exists(p.reg);
}

Mapped MapRegistry(const std::string& reg_path) {
  Mapped m;
  m.fd = open(reg_path.c_str(), O_RDWR | O_CLOEXEC);
  if (m.fd < 0) return m;
  struct stat st;
  fstat(m.fd, &st);
  m.size = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, m.size, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
  if (map != MAP_FAILED) m.bytes = static_cast<uint8_t*>(map);
  return m;
}

}  // namespace ipclock_test

namespace {

using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

SemaphoreSuite kSuite = {
    "posix-semaphore", "posix-semaphore:?keep_idle=0",
    [](const std::string& r) { return ObjectsExist(r); },
    MakeWithKeepIdle<ipclock::PosixSemaphoreStoreOptions, ipclock::NewPosixSemaphoreStore>};

// The documented bound on a dead holder's permit coming back to a waiter,
// plus generous slack for a loaded machine.
constexpr double kReclaimBound = 0.2;
constexpr double kSlack = 2.0;

ino_t InodeOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) fail_msg("stat %s: %s", path.c_str(), strerror(errno));
  return st.st_ino;
}

// --- Names and options ---------------------------------------------------------

void Names(void**) {
  assert_string_equal(ipclock::PosixSemaphoreName("invoice-42").c_str(),
                      "/ipclock.3c304bc21c84147600a54c27b7bccab9");
  assert_string_equal(ipclock::PosixSemaphoreName("invoice-42", "app").c_str(),
                      "/app.3c304bc21c84147600a54c27b7bccab9");
  // Any bytes in a resource still give a valid name (no '/').
  std::string odd("a/b\0c", 5);
  assert_int_equal(ipclock::PosixSemaphoreName(odd).find('/', 1), std::string::npos);
}

void DsnOptions(void**) {
  OpenStore("posix-semaphore:?prefix=my_app-1.x&mode=0666&keep_idle=0");
  ExpectBadDsns("posix-semaphore:",
                {"?prefix=a/b", "?prefix=", "?key_scheme=md5", "//x", "?fair=maybe"});
}

// Fairness is the resource's, fixed by the process that makes its pair:
// a store that asks otherwise is refused with a message that says so.
void FairIsFixedPerResource(void**) {
  std::shared_ptr<Store> fair = OpenStore("posix-semaphore:?fair=true");
  std::shared_ptr<Store> plain = OpenStore();
  assert_true(fair->capabilities().fair);
  assert_false(plain->capabilities().fair);
  const std::string resource = UniqueResource("fair");
  Lock held = HeldOrFail(fair, resource);
  Lock other = MakeLock(plain, resource);
  absl::StatusOr<bool> got = other.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
  AssertMessageHas(got.status(), "made it with fair=true");
  Lock rival = MakeLock(fair, resource);
  assert_false(TryOrFail(rival));
}

// --- When the pair is made and removed -------------------------------------------

void PairGoesWithLastLockWhenNothingIsKept(void**) {
  std::shared_ptr<Store> store = OpenStore("posix-semaphore:?prefix=ipclock-left&keep_idle=0");
  const std::string resource = UniqueResource("left");
  Lock a = MakeLock(store, resource);
  Lock b = MakeLock(store, resource);
  assert_false(ObjectsExist(resource, "ipclock-left"));
  assert_true(TryOrFail(a));
  assert_true(ObjectsExist(resource, "ipclock-left"));
  assert_false(TryOrFail(b));
  // What `ipclock list` reads: two attached, one holding, no permit free.
  absl::StatusOr<ipclock::RegistrySnapshot> snap = ipclock::ReadRegistrySnapshot(
      ipclock::PosixSemaphoreName(resource, "ipclock-left") + ".reg");
  ASSERT_OK(snap);
  assert_int_equal(snap->permits, 1);
  assert_int_equal(snap->attached.size(), 2);
  assert_int_equal(snap->attached[0].holding + snap->attached[1].holding, 1);
  assert_int_equal(snap->attached[0].pid, getpid());
  assert_int_equal(snap->semaphore_value, 0);
  ASSERT_OK(a.Release());
  Drop(a);
  assert_true(ObjectsExist(resource, "ipclock-left"));  // b still exists
  TakeAndRelease(b);
  Drop(b);
  assert_false(ObjectsExist(resource, "ipclock-left"));
}

// By default a destroyed Lock's attachment is kept: full cycles on the
// resource use the same files (same inodes), and they go with the store.
void IdlePairIsKeptForTheNextLock(void**) {
  std::shared_ptr<Store> store = OpenStore("posix-semaphore:?prefix=ipclock-idle");
  const std::string resource = UniqueResource("idle");
  const Paths p = PathsOf(resource, "ipclock-idle");
  {
    Lock first = HeldOrFail(store, resource);
  }
  const ino_t sem_ino = InodeOf(p.sem), reg_ino = InodeOf(p.reg);
  for (int i = 0; i < 200; ++i) {
    Lock lock = MakeLock(store, resource);
    TakeAndRelease(lock);
  }
  assert_int_equal(InodeOf(p.sem), sem_ino);
  assert_int_equal(InodeOf(p.reg), reg_ino);
  store.reset();
  assert_false(ObjectsExist(resource, "ipclock-idle"));
}

// A fork()ed child that destroys its copy of a released Lock leaves the
// parent's slot (and so the pair) alone. (One forked while the parent holds
// is ForkedChildCannotReleaseParentsLock.)
void ForkedChildLeavesParentsAttachment(void**) {
  std::shared_ptr<Store> store = OpenStore("posix-semaphore:?keep_idle=0");
  const std::string resource = UniqueResource("fork");
  Lock lock = MakeLock(store, resource);
  TakeAndRelease(lock);
  pid_t child = ForkChild([&] {
    Lock copy = std::move(lock);
    return 0;
  });
  assert_int_equal(WaitChild(child), 0);
  assert_true(ObjectsExist(resource));
  TakeAndRelease(lock);
  Drop(lock);
  assert_false(ObjectsExist(resource));
}

// --- Owner death -----------------------------------------------------------------

void KilledHolderPermitComesBackToWaiter(void**) {
  const double back = KilledHolderReachesWaiter(OpenStore(), UniqueResource("kill"));
  print_message("permit back %.3f s after kill -9 (bound %.1f s)\n", back, kReclaimBound);
  if (back > kReclaimBound + kSlack) fail_msg("permit came back only after %.3f s", back);
}

// A live holder is never reclaimed: not one that is stopped (SIGSTOP), nor
// one whose main thread has exited (a zombie thread-group leader) while
// another of its threads goes on.
void LiveHolderIsNeverReclaimed(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("live");
  Signal locked;
  pid_t holder = HoldInChild(store, resource, &locked);
  assert_int_equal(locked.Wait(), 'x');
  Lock lock = MakeLock(store, resource);
  ASSERT_CODE(lock.Acquire(absl::Milliseconds(500)), absl::StatusCode::kDeadlineExceeded);
  kill(holder, SIGSTOP);
  ASSERT_CODE(lock.Acquire(absl::Milliseconds(500)), absl::StatusCode::kDeadlineExceeded);
  KillChild(holder);
  ASSERT_OK(lock.Acquire(absl::Seconds(5)));
  assert_true(lock.previous_owner_died());
  ASSERT_OK(lock.Release());

  const std::string other = UniqueResource("live-thread");
  holder = ForkChild([&] {
    Lock held = MakeLock(store, other);
    if (!held.TryAcquire().value_or(false)) return 2;
    pthread_t t;
    if (pthread_create(&t, nullptr, [](void*) -> void* {
          for (;;) pause();
        }, nullptr) != 0) {
      return 3;
    }
    locked.Notify();
    pthread_exit(nullptr);  // the leader ends; the process lives on
  });
  assert_int_equal(locked.Wait(), 'x');
  usleep(100 * 1000);
  Lock rival = MakeLock(store, other);
  ASSERT_CODE(rival.Acquire(absl::Milliseconds(500)), absl::StatusCode::kDeadlineExceeded);
  KillChild(holder);
  ASSERT_OK(rival.Acquire(absl::Seconds(5)));
  assert_true(rival.previous_owner_died());
}

// A process that takes a post from the semaphore and dies before it takes
// a permit (a waiter killed just after its wake-up, or a program that
// sem_waits on the semaphore) takes no permit with it: the registry alone
// counts them. A waiter whose wake-up is lost so finds the permit within
// its slice.
void StolenPostTakesNoPermit(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("stolen-post");
  const std::string name = ipclock::PosixSemaphoreName(resource);
  Lock keeper = MakeLock(store, resource);  // keeps the pair in /dev/shm
  TakeAndRelease(keeper);
  pid_t thief = ForkChild([&] {
    sem_t* sem = sem_open(name.c_str(), 0);
    if (sem == SEM_FAILED) return 2;
    if (sem_trywait(sem) != 0) return 3;
    _exit(0);  // dies with the post, as if killed
  });
  assert_int_equal(WaitChild(thief), 0);
  Lock a = HeldOrFail(store, resource);
  assert_false(a.previous_owner_died());
  Lock b = MakeLock(store, resource);
  assert_false(TryOrFail(b));

  Signal waiting;
  auto* report = SharedMemory<DeathReport>();
  pid_t waiter = WaitInChild(store, resource, &waiting, report);
  assert_int_equal(waiting.Wait(), 'x');
  usleep(100 * 1000);
  sem_t* sem = sem_open(name.c_str(), 0);
  assert_true(sem != SEM_FAILED);
  ASSERT_OK(a.Release());
  const int64_t released_at = ipclock::Deadline::NowNanos();
  sem_trywait(sem);  // may lose the race to the waiter: then nothing to see
  sem_close(sem);
  assert_int_equal(WaitChild(waiter, 30), 0);
  assert_int_equal(report->acquired.load(), 1);
  const double back = static_cast<double>(report->acquired_at_ns.load() - released_at) / 1e9;
  if (back > kReclaimBound + kSlack) fail_msg("waiter woke only after %.3f s", back);
}

// --- The pair deleted or rewritten under a holder ----------------------------------

// Both files deleted (a cleaner, RemoveIPC): CheckAcquired says so, and
// another process can take the lock meanwhile, so the loss is real.
// Only the semaphore deleted, or the registry replaced: said too. A release
// more than the check interval after the deletion says so.
void PairDeletedWhileHeld(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("deleted");
  const Paths p = PathsOf(resource);
  Lock lock = HeldOrFail(store, resource);
  ASSERT_OK(lock.CheckAcquired());
  assert_int_equal(unlink(p.sem.c_str()), 0);
  assert_int_equal(unlink(p.reg.c_str()), 0);
  assert_true(TryInAnotherProcess(store, resource) == OtherTry::kGot);
  absl::Status checked = lock.CheckAcquired();
  ASSERT_CODE(checked, absl::StatusCode::kAborted);
  AssertMessageHas(checked, absl::StrCat("the registry ", p.reg, " was deleted"));

  assert_true(TryOrFail(lock));  // attaches afresh
  assert_int_equal(unlink(p.sem.c_str()), 0);
  checked = lock.CheckAcquired();
  ASSERT_CODE(checked, absl::StatusCode::kAborted);
  AssertMessageHas(checked, absl::StrCat("the semaphore ", p.sem, " was deleted"));
  // Let go of, the registry went with the last attachment to it.
  assert_false(Exists(p.reg));

  assert_true(TryOrFail(lock));
  // Replaced: another file renamed over the registry's name.
  const std::string impostor = p.reg + ".new";
  assert_int_equal(link(p.reg.c_str(), impostor.c_str()), 0);  // keeps the inode linked
  const int fd = open((p.reg + ".other").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(rename((p.reg + ".other").c_str(), p.reg.c_str()), 0);
  checked = lock.CheckAcquired();
  ASSERT_CODE(checked, absl::StatusCode::kAborted);
  AssertMessageHas(checked, "was replaced");
  unlink(impostor.c_str());
  unlink(p.reg.c_str());
  unlink(p.sem.c_str());

  assert_true(TryOrFail(lock));
  unlink(p.sem.c_str());
  unlink(p.reg.c_str());
  usleep(50 * 1000);  // past the release's check interval
  absl::Status released = lock.Release();
  ASSERT_CODE(released, absl::StatusCode::kAborted);
  AssertMessageHas(released, "was deleted while the lock was held");
  TakeAndRelease(lock);
}

// A LockWatch learns of the registry's deletion from inotify, at once: with
// an hour between its checks, only the event can tell it. No event, no
// report.
void WatchSeesDeletionAtOnce(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("watched");
  const Paths p = PathsOf(resource);
  Lock lock = HeldOrFail(store, resource);
  CheckWatchReportsLoss(std::move(lock), absl::Hours(1),
                        [&] { assert_int_equal(unlink(p.reg.c_str()), 0); }, "was deleted");
  unlink(p.sem.c_str());
}

// A process with write access rewrites the holder word under a holder:
// CheckAcquired and Release say the registry no longer names us.
void HolderRewrittenUnderUs(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("rewritten");
  Lock lock = HeldOrFail(store, resource);
  Mapped m = MapRegistry(PathsOf(resource).reg);
  assert_non_null(m.bytes);
  uint32_t stranger = 77;
  memcpy(m.bytes + kOffOwner, &stranger, sizeof(stranger));
  absl::Status checked = lock.CheckAcquired();
  ASSERT_CODE(checked, absl::StatusCode::kAborted);
  AssertMessageHas(checked, "no longer names this process");
  munmap(m.bytes, m.size);
  close(m.fd);
  // Let go of, the registry went with the last attachment to it: the next
  // acquisition makes a new one.
  assert_true(TryOrFail(lock));
  m = MapRegistry(PathsOf(resource).reg);
  assert_non_null(m.bytes);
  memcpy(m.bytes + kOffOwner, &stranger, sizeof(stranger));
  ASSERT_CODE(lock.Release(), absl::StatusCode::kAborted);
  munmap(m.bytes, m.size);
  close(m.fd);
  // The stranger's name stays in the registry, which keeps the pair alive
  // for a holder that never comes: the test's own to remove.
  Drop(lock);
  const Paths p = PathsOf(resource);
  unlink(p.sem.c_str());
  unlink(p.reg.c_str());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(Names),
      cmocka_unit_test(DsnOptions),
      cmocka_unit_test(FairIsFixedPerResource),
      cmocka_unit_test(PairGoesWithLastLockWhenNothingIsKept),
      cmocka_unit_test(IdlePairIsKeptForTheNextLock),
      cmocka_unit_test(ForkedChildLeavesParentsAttachment),
      cmocka_unit_test(KilledHolderPermitComesBackToWaiter),
      cmocka_unit_test(LiveHolderIsNeverReclaimed),
      cmocka_unit_test(StolenPostTakesNoPermit),
      cmocka_unit_test(PairDeletedWhileHeld),
      cmocka_unit_test(WatchSeesDeletionAtOnce),
      cmocka_unit_test(HolderRewrittenUnderUs),
      cmocka_unit_test(ForeignFilesAreRefused),
      cmocka_unit_test(FailedCreationLeavesNothing),
      cmocka_unit_test(FailedRemovalIsFinishedLater),
      cmocka_unit_test(CreationKilledAtRandomLeavesNothing),
      cmocka_unit_test(ScribblerCrashesNothing),
  };
  return RunWithSharedTests(tests, &kSuite);
}
