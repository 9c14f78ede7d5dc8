// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The SysV semaphore store, beyond the conformance suite: Symfony's key
// vectors, DSN options, when a set is made and removed (idle attachments
// kept by the store), owner death reported to a waiter, counting permits
// between processes, a set removed or reset under a holder (ipcrm,
// Symfony's release, SETVAL) with CheckAcquired, Release and LockWatch,
// sets of other programs under our key, a process replacing the set under
// us in a loop, failed system calls while attaching, and interop with PHP's
// Symfony SemaphoreStore, including PHP holders killed with SIGKILL
// (tests/php/semaphore_peer.php; skipped, saying why, without php-cli,
// sysvsem or php-symfony-lock; in sysv_semaphore_test_php.cc, for length).

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock/lock.h"
#include "ipclock/stores/semaphore_store.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "ipclock_config.h"
#include "peer_process.h"
#include "platform/faults.h"
#include "spawn_util.h"
#include "semaphore_test_util.h"
#include "sysv_semaphore_test.h"
#include "php_peer.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

std::shared_ptr<ipclock::Store> OpenStore(const std::string& dsn) {
  return OpenStoreOrFail(dsn);
}

int32_t KeyOf(const std::string& resource) {
  return *ipclock::SemaphoreIpcKey(resource, ipclock::SemaphoreKeyScheme::kMd5);
}

int SemidOf(const std::string& resource) { return semget(KeyOf(resource), 0, 0); }

bool SetExists(const std::string& resource) { return SemidOf(resource) >= 0; }

}  // namespace ipclock_test

namespace {

using ipclock::Lock;
using ipclock::LockOptions;
using ipclock::SemaphoreKeyScheme;
using ipclock::Store;
using namespace ipclock_test;

SemaphoreSuite kSuite = {
    "semaphore", "semaphore:?keep_idle=0", [](const std::string& r) { return SetExists(r); },
    MakeWithKeepIdle<ipclock::SemaphoreStoreOptions, ipclock::NewSemaphoreStore>};

// --- Keys and options ----------------------------------------------------------

void SymfonyKeyVectors(void**) {
  absl::StatusOr<int32_t> md5 = ipclock::SemaphoreIpcKey("invoice-42", SemaphoreKeyScheme::kMd5);
  ASSERT_OK(md5);
  assert_int_equal(*md5, 1743716640);
  absl::StatusOr<int32_t> xxh3 = ipclock::SemaphoreIpcKey("invoice-42", SemaphoreKeyScheme::kXxh3);
#if IPCLOCK_HAVE_XXHASH
  ASSERT_OK(xxh3);
  assert_int_equal(*xxh3, 538577464);
#else
  ASSERT_CODE(xxh3, absl::StatusCode::kUnimplemented);
#endif
}

void DsnOptions(void**) {
  OpenStore("semaphore:?mode=0666&key_scheme=md5&keep_idle=0");
#if IPCLOCK_HAVE_XXHASH
  OpenStore("semaphore:?key_scheme=xxh3");
#else
  ASSERT_CODE(ipclock::StoreFromDsn("semaphore:?key_scheme=xxh3"),
              absl::StatusCode::kUnimplemented);
#endif
  ExpectBadDsns("semaphore:", {"?permit=3", "?key_scheme=sha1", "?mode=0999", "//host"});
}

// --- When sets are made and removed ---------------------------------------------

// keep_idle=0: a set exists from the first acquisition until the last Lock
// on it in any process is destroyed, also after a waiter got the lock from
// a holder in another process.
void SetGoesWithLastLockWhenNothingIsKept(void**) {
  std::shared_ptr<Store> store = OpenStore("semaphore:?keep_idle=0");
  const std::string resource = UniqueResource("left");
  Lock a = MakeLock(store, resource);
  Lock b = MakeLock(store, resource);
  assert_false(SetExists(resource));
  assert_true(TryOrFail(a));
  assert_false(TryOrFail(b));  // b stays attached after its failed try
  ASSERT_OK(a.Release());
  Drop(a);
  assert_true(SetExists(resource));  // b still exists
  Signal locked, release;
  pid_t child = ForkChild([&] {
    Lock c = MakeLock(store, resource);
    if (!c.TryAcquire().value_or(false)) return 2;
    locked.Notify();
    release.Wait(20);
    return c.Release().ok() ? 0 : 3;
  });
  assert_int_equal(locked.Wait(), 'x');
  release.Notify();
  ASSERT_OK(b.Acquire(absl::Seconds(20)));
  assert_int_equal(WaitChild(child), 0);
  ASSERT_OK(b.Release());
  Drop(b);
  assert_int_equal(semget(KeyOf(resource), 0, 0), -1);
  assert_int_equal(errno, ENOENT);
}

// By default a destroyed Lock's attachment is kept: the next full cycle on
// the resource uses the same set without attaching (no SETVAL: sem_ctime
// stays, and the usage count stays 1), and the set goes with the store.
void IdleSetIsKeptForTheNextLock(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("idle");
  {
    Lock first = HeldOrFail(store, resource);
  }
  const int semid = SemidOf(resource);
  assert_true(semid >= 0);
  struct semid_ds before;
  assert_int_equal(semctl(semid, 0, IPC_STAT, &before), 0);
  for (int i = 0; i < 200; ++i) {
    Lock lock = HeldOrFail(store, resource);
    assert_int_equal(semctl(semid, 1, GETVAL), 1);
    ASSERT_OK(lock.Release());
  }
  assert_int_equal(SemidOf(resource), semid);
  struct semid_ds after;
  assert_int_equal(semctl(semid, 0, IPC_STAT, &after), 0);
  assert_int_equal(after.sem_ctime, before.sem_ctime);
  assert_int_equal(semctl(semid, 0, GETVAL), 1);  // released
  store.reset();
  assert_false(SetExists(resource));
}

// A reused Lock stays attached: acquiring and releasing again neither makes
// nor removes a set; a fork()ed child that destroys its copy of the Lock
// does not end the parent's attachment (it has none of the undo records).
void ReusedLockKeepsItsSet(void**) {
  std::shared_ptr<Store> store = OpenStore("semaphore:?keep_idle=0");
  const std::string resource = UniqueResource("reuse");
  {
    Lock lock = HeldOrFail(store, resource);
    const int semid = SemidOf(resource);
    assert_true(semid >= 0);
    ASSERT_OK(lock.Release());
    for (int i = 0; i < 100; ++i) {
      TakeAndRelease(lock);
      assert_int_equal(SemidOf(resource), semid);
    }
    pid_t child = ForkChild([&] {
      Lock copy = std::move(lock);
      return 0;
    });
    assert_int_equal(WaitChild(child), 0);
    assert_int_equal(semctl(semid, 1, GETVAL), 1);
    TakeAndRelease(lock);
  }
  assert_false(SetExists(resource));
}

// --- Owner death and counting ----------------------------------------------------

// A waiter already asleep when the holder dies gets the permit the kernel
// gives back, and is told; the next holder after its clean release is not.
void KilledHolderReportedToWaiter(void**) {
  KilledHolderReachesWaiter(OpenStore(), UniqueResource("kill"));
}

// --- A set removed or changed under us -------------------------------------------

// What Symfony's release does to the set: a waiter goes on waiting on the
// set the key leads to next; the holder finds its lock lost at release.
void WaiterSurvivesSetRemoval(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("rmid");
  Lock holder = HeldOrFail(store, resource);
  const int semid = SemidOf(resource);
  Signal waiting;
  pid_t waiter = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    waiting.Notify();
    absl::Status s = lock.Acquire(absl::Seconds(20));
    if (!s.ok()) {
      fprintf(stderr, "waiter: %s\n", s.ToString().c_str());
      return 2;
    }
    return lock.Release().ok() ? 0 : 3;
  });
  assert_int_equal(waiting.Wait(), 'x');
  usleep(200 * 1000);
  assert_int_equal(semctl(semid, 0, IPC_RMID), 0);
  assert_int_equal(WaitChild(waiter), 0);
  ASSERT_CODE(holder.Release(), absl::StatusCode::kAborted);
  // The next acquisition attaches to the key's set afresh.
  assert_true(TryOrFail(holder));
  assert_int_not_equal(SemidOf(resource), semid);
  ASSERT_OK(holder.Release());
}

int RunIpcrm(int semid) {
  int code = -1;
  RunForOutput({"ipcrm", "-s", std::to_string(semid)}, &code);
  return code;
}

// `ipcrm -s ID` under a holder: CheckAcquired says so (and another process
// can take the lock meanwhile, so the loss is real), a Release says so,
// and a LockWatch reports it within its interval.
void SetRemovedWhileHeld(void**) {
  if (FindInPath("ipcrm").empty()) {
    print_message("skipped: no ipcrm (util-linux)\n");
    skip();
  }
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("ipcrm");
  Lock lock = HeldOrFail(store, resource);
  ASSERT_OK(lock.CheckAcquired());
  int semid = SemidOf(resource);
  assert_int_equal(RunIpcrm(semid), 0);
  assert_true(TryInAnotherProcess(store, resource) == OtherTry::kGot);
  absl::Status checked = lock.CheckAcquired();
  ASSERT_CODE(checked, absl::StatusCode::kAborted);
  AssertMessageHas(checked, absl::StrCat("semaphore set ", semid, " (key ", KeyOf(resource),
                                         ") was removed"));
  assert_false(lock.is_acquired());

  assert_true(TryOrFail(lock));
  semid = SemidOf(resource);
  assert_int_equal(RunIpcrm(semid), 0);
  absl::Status released = lock.Release();
  ASSERT_CODE(released, absl::StatusCode::kAborted);
  AssertMessageHas(released, "was removed while the lock was held");

  assert_true(TryOrFail(lock));
  semid = SemidOf(resource);
  CheckWatchReportsLoss(std::move(lock), absl::Milliseconds(50),
                        [&] { assert_int_equal(RunIpcrm(semid), 0); }, "was removed");
}

// Another process resets the lock semaphore (SETVAL) under a holder: the
// set is still there, but the permit is not ours anymore.
void SetResetWhileHeld(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("setval");
  Lock lock = HeldOrFail(store, resource);
  pid_t resetter = ForkChild([&] { return semctl(SemidOf(resource), 0, SETVAL, 1) == 0 ? 0 : 2; });
  assert_int_equal(WaitChild(resetter), 0);
  absl::Status checked = lock.CheckAcquired();
  ASSERT_CODE(checked, absl::StatusCode::kAborted);
  AssertMessageHas(checked, "was reset by another process");
}

// Another program's set under our key (7 semaphores) is refused, never
// used or removed.
void ForeignSetUnderKeyIsRefused(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("foreign");
  const int semid = semget(KeyOf(resource), 7, IPC_CREAT | IPC_EXCL | 0600);
  assert_true(semid >= 0);
  Lock lock = MakeLock(store, resource);
  absl::StatusOr<bool> got = lock.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(got.status(), "has 7 semaphores");
  assert_int_equal(SemidOf(resource), semid);
  for (int i = 0; i < 7; ++i) assert_int_equal(semctl(semid, i, GETVAL), 0);
  assert_int_equal(semctl(semid, 0, IPC_RMID), 0);
}

// A process with rights on the set replaces it, again and again, with sets
// of every size (1 to 300 semaphores) and random values, while ipclock
// processes attach, take, check and release it (permits=2, so that every
// acquisition reads the whole set). Errors are expected; a crash (a set's
// size trusted and GETALL writing past a buffer) or a hang is not.
void SetReplacedInALoopCrashesNothing(void**) {
  const std::string resource = UniqueResource("racing");
  const int32_t key = KeyOf(resource);
  UseWhileAttacked(
      [&](const std::function<bool()>& going_on) {
        unsigned seed = static_cast<unsigned>(getpid());
        while (going_on()) {
          const int old = semget(key, 0, 0);
          if (old >= 0) semctl(old, 0, IPC_RMID);
          const int nsems = 1 + static_cast<int>(rand_r(&seed) % 300);
          const int id = semget(key, nsems, IPC_CREAT | 0600);
          for (int i = 0; id >= 0 && i < 8; ++i) {
            semctl(id, static_cast<int>(rand_r(&seed) % static_cast<unsigned>(nsems)), SETVAL,
                   static_cast<int>(rand_r(&seed) % 4));
          }
          usleep(rand_r(&seed) % 300);
        }
        return 0;
      },
      [&] { return TryCheckRelease("semaphore", resource, 2, 20, absl::Milliseconds(5)); });
  const int left = semget(key, 0, 0);
  if (left >= 0) semctl(left, 0, IPC_RMID);
}

// Every system call of an attachment failing in turn (semget, semop,
// semctl): the error names the call, nothing is held, #2 is not left
// taken (the next attachment goes through at once) and no set is left.
void FailedAttachLeavesNothing(void**) {
  struct Point {
    ipclock::FaultPoint point;
    int err;
    const char* call;
  };
  for (Point p : {Point{ipclock::FaultPoint::kSemget, ENOSPC, "semget"},
                  Point{ipclock::FaultPoint::kSemop, ENOMEM, "semop"},
                  Point{ipclock::FaultPoint::kSemctl, EACCES, "semctl"}}) {
    for (int skip = 0; skip < 12; ++skip) {
      const std::string resource = UniqueResource("attach-fault");
      std::shared_ptr<Store> store = OpenStore("semaphore:?keep_idle=0");
      Lock lock = MakeLock(store, resource);
      ipclock::InjectFault(p.point, p.err, 1, skip);
      absl::StatusOr<bool> got = lock.TryAcquire();
      ipclock::ClearFaults();
      if (!got.ok()) {
        AssertMessageHas(got.status(), p.call);
        assert_false(lock.is_acquired());
      }
      pid_t other = ForkChild([&] {
        Lock rival = MakeLock(store, resource);
        absl::StatusOr<bool> r =
            rival.TryAcquireFor(lock.is_acquired() ? absl::ZeroDuration() : absl::Seconds(5));
        if (!r.ok()) return 2;
        return *r == !lock.is_acquired() ? 0 : 3;
      });
      assert_int_equal(WaitChild(other), 0);
      Drop(lock);
      store.reset();
      if (SetExists(resource)) fail_msg("%s fault after %d calls left a set", p.call, skip);
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(SymfonyKeyVectors),
      cmocka_unit_test(DsnOptions),
      cmocka_unit_test(SetGoesWithLastLockWhenNothingIsKept),
      cmocka_unit_test(IdleSetIsKeptForTheNextLock),
      cmocka_unit_test(ReusedLockKeepsItsSet),
      cmocka_unit_test(KilledHolderReportedToWaiter),
      cmocka_unit_test(WaiterSurvivesSetRemoval),
      cmocka_unit_test(SetRemovedWhileHeld),
      cmocka_unit_test(SetResetWhileHeld),
      cmocka_unit_test(ForeignSetUnderKeyIsRefused),
      cmocka_unit_test(SetReplacedInALoopCrashesNothing),
      cmocka_unit_test(FailedAttachLeavesNothing),
      cmocka_unit_test(PhpHoldsIpclockWaits),
      cmocka_unit_test(IpclockHoldsPhpIsRefused),
      cmocka_unit_test(PhpHolderKilledReportedToLaterProcess),
      cmocka_unit_test(PhpHolderKilledReportedToWaiter),
  };
  return RunWithSharedTests(tests, &kSuite);
}
