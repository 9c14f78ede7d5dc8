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
// while others use it.

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
#include "stores/posix_semaphore_page.h"
#include "stores/posix_semaphore_registry.h"
#include "semaphore_test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::LockOptions;
using ipclock::Store;
using namespace ipclock_test;

// The documented bound on a dead holder's permit coming back to a waiter,
// plus generous slack for a loaded machine.
constexpr double kReclaimBound = 0.2;
constexpr double kSlack = 2.0;

std::shared_ptr<Store> OpenStore(const std::string& dsn = "posix-semaphore") {
  return OpenStoreOrFail(dsn);
}

struct Paths {
  std::string sem;  // /dev/shm/sem.<prefix>.<hex>
  std::string reg;  // /dev/shm/<prefix>.<hex>.reg
};
Paths PathsOf(const std::string& resource, absl::string_view prefix = "ipclock") {
  const std::string name = ipclock::PosixSemaphoreName(resource, prefix);
  return Paths{absl::StrCat("/dev/shm/sem.", name.substr(1)), absl::StrCat("/dev/shm", name, ".reg")};
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Whether the semaphore or the registry of `resource` is in /dev/shm.
bool ObjectsExist(const std::string& resource, absl::string_view prefix = "ipclock") {
  const Paths p = PathsOf(resource, prefix);
  return Exists(p.sem) || Exists(p.reg);
}

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
  OpenStore("posix-semaphore:?keep_idle=4096");
  for (const char* bad :
       {"posix-semaphore:?prefix=a/b", "posix-semaphore:?prefix=", "posix-semaphore:?key_scheme=md5",
        "posix-semaphore://x", "posix-semaphore:?keep_idle=-3", "posix-semaphore:?keep_idle=9999",
        "posix-semaphore:?keep_idle=x", "posix-semaphore:?fair=maybe"}) {
    ASSERT_CODE(ipclock::StoreFromDsn(bad), absl::StatusCode::kInvalidArgument);
  }
  ipclock::PosixSemaphoreStoreOptions options;
  options.keep_idle = 4097;
  ASSERT_CODE(ipclock::NewPosixSemaphoreStore(options), absl::StatusCode::kInvalidArgument);
}

// Fairness is the resource's, fixed by the process that makes its pair:
// a store that asks otherwise is refused with a message that says so.
void FairIsFixedPerResource(void**) {
  std::shared_ptr<Store> fair = OpenStore("posix-semaphore:?fair=true");
  std::shared_ptr<Store> plain = OpenStore();
  assert_true(fair->capabilities().fair);
  assert_false(plain->capabilities().fair);
  const std::string resource = UniqueResource("fair");
  Lock held = MakeLock(fair, resource);
  assert_true(TryOrFail(held));
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
  assert_true(TryOrFail(b));
  ASSERT_OK(b.Release());
  Drop(b);
  assert_false(ObjectsExist(resource, "ipclock-left"));
}

// By default a destroyed Lock's attachment is kept: full cycles on the
// resource use the same files (same inodes), and they go with the store;
// at most keep_idle are kept, the least recently used going first.
void IdlePairIsKeptForTheNextLock(void**) {
  std::shared_ptr<Store> store = OpenStore("posix-semaphore:?prefix=ipclock-idle");
  const std::string resource = UniqueResource("idle");
  const Paths p = PathsOf(resource, "ipclock-idle");
  {
    Lock first = MakeLock(store, resource);
    assert_true(TryOrFail(first));
  }
  const ino_t sem_ino = InodeOf(p.sem), reg_ino = InodeOf(p.reg);
  for (int i = 0; i < 200; ++i) {
    Lock lock = MakeLock(store, resource);
    assert_true(TryOrFail(lock));
    ASSERT_OK(lock.Release());
  }
  assert_int_equal(InodeOf(p.sem), sem_ino);
  assert_int_equal(InodeOf(p.reg), reg_ino);
  store.reset();
  assert_false(ObjectsExist(resource, "ipclock-idle"));

  std::shared_ptr<Store> two = OpenStore("posix-semaphore:?prefix=ipclock-idle&keep_idle=2");
  const std::string r[3] = {UniqueResource("lru"), UniqueResource("lru"), UniqueResource("lru")};
  for (const std::string& name : r) {
    Lock lock = MakeLock(two, name);
    assert_true(TryOrFail(lock));
  }
  assert_false(ObjectsExist(r[0], "ipclock-idle"));
  assert_true(ObjectsExist(r[1], "ipclock-idle") && ObjectsExist(r[2], "ipclock-idle"));
  two.reset();
  assert_false(ObjectsExist(r[1], "ipclock-idle") || ObjectsExist(r[2], "ipclock-idle"));
}

// A fork()ed child that destroys its copy of a released Lock leaves the
// parent's slot (and so the pair) alone; one forked while the parent holds
// can neither release the parent's lock nor give it away.
void ForkedChildLeavesParentsAttachment(void**) {
  std::shared_ptr<Store> store = OpenStore("posix-semaphore:?keep_idle=0");
  const std::string resource = UniqueResource("fork");
  Lock lock = MakeLock(store, resource);
  assert_true(TryOrFail(lock));
  ASSERT_OK(lock.Release());
  pid_t child = ForkChild([&] {
    Lock copy = std::move(lock);
    return 0;
  });
  assert_int_equal(WaitChild(child), 0);
  assert_true(ObjectsExist(resource));
  assert_true(TryOrFail(lock));
  child = ForkChild([&] {
    if (!absl::IsFailedPrecondition(lock.Release())) return 2;
    Lock copy = std::move(lock);
    return 0;
  });
  assert_int_equal(WaitChild(child), 0);
  pid_t rival = ForkChild([&] {
    Lock other = MakeLock(store, resource);
    return other.TryAcquire().value_or(true) ? 3 : 0;
  });
  assert_int_equal(WaitChild(rival), 0);
  assert_true(IsStillHeld(lock));
  ASSERT_OK(lock.Release());
  Drop(lock);
  assert_false(ObjectsExist(resource));
}

// --- Owner death -----------------------------------------------------------------

void KilledHolderPermitComesBackToWaiter(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("kill");
  auto* report = SharedMemory<DeathReport>();
  Signal locked, waiting;
  pid_t holder = HoldInChild(store, resource, &locked);
  assert_int_equal(locked.Wait(), 'x');
  pid_t waiter = WaitInChild(store, resource, &waiting, report);
  assert_int_equal(waiting.Wait(), 'x');
  usleep(300 * 1000);
  const int64_t killed_at = ipclock::Deadline::NowNanos();
  // The holder stays a zombie until we reap it below: the registry must see
  // through that too.
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(waiter, 30), 0);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
  assert_int_equal(report->acquired.load(), 1);
  assert_int_equal(report->died.load(), 1);
  const double back = static_cast<double>(report->acquired_at_ns.load() - killed_at) / 1e9;
  print_message("permit back %.3f s after kill -9 (bound %.1f s)\n", back, kReclaimBound);
  if (back > kReclaimBound + kSlack) fail_msg("permit came back only after %.3f s", back);
  Lock next = MakeLock(store, resource);
  assert_true(TryOrFail(next));
  assert_false(next.previous_owner_died());
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
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
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
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
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
  assert_true(TryOrFail(keeper));
  ASSERT_OK(keeper.Release());
  pid_t thief = ForkChild([&] {
    sem_t* sem = sem_open(name.c_str(), 0);
    if (sem == SEM_FAILED) return 2;
    if (sem_trywait(sem) != 0) return 3;
    _exit(0);  // dies with the post, as if killed
  });
  assert_int_equal(WaitChild(thief), 0);
  Lock a = MakeLock(store, resource);
  assert_true(TryOrFail(a));
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
  Lock lock = MakeLock(store, resource);
  assert_true(TryOrFail(lock));
  ASSERT_OK(lock.CheckAcquired());
  assert_int_equal(unlink(p.sem.c_str()), 0);
  assert_int_equal(unlink(p.reg.c_str()), 0);
  pid_t rival = ForkChild([&] {
    Lock other = MakeLock(store, resource);
    return other.TryAcquire().value_or(false) ? 0 : 2;
  });
  assert_int_equal(WaitChild(rival), 0);
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
  assert_true(TryOrFail(lock));
  ASSERT_OK(lock.Release());
}

// A LockWatch learns of the registry's deletion from inotify, at once: with
// an hour between its checks, only the event can tell it. No event, no
// report.
void WatchSeesDeletionAtOnce(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("watched");
  const Paths p = PathsOf(resource);
  Lock lock = MakeLock(store, resource);
  assert_true(TryOrFail(lock));
  CheckWatchReportsLoss(std::move(lock), absl::Hours(1),
                        [&] { assert_int_equal(unlink(p.reg.c_str()), 0); }, "was deleted");
  unlink(p.sem.c_str());
}

// Maps the registry of `resource` read-write, as a scribbler would.
struct Mapped {
  int fd = -1;
  uint8_t* bytes = nullptr;
  size_t size = 0;
};
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

// Byte offsets of the page's words (stores/posix_semaphore_page.h).
constexpr size_t kOffPermits = offsetof(ipclock::RegistryPage, permits);
constexpr size_t kOffOwner = offsetof(ipclock::RegistryPage, owner);
constexpr size_t kOffHolders = offsetof(ipclock::RegistryPage, holders);
constexpr size_t kOffOrphans = offsetof(ipclock::RegistryPage, orphans);
constexpr size_t kOffSlots = offsetof(ipclock::RegistryPage, slots);

// A process with write access rewrites the holder word under a holder:
// CheckAcquired and Release say the registry no longer names us.
void HolderRewrittenUnderUs(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("rewritten");
  Lock lock = MakeLock(store, resource);
  assert_true(TryOrFail(lock));
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
}

// --- Files that are not ours --------------------------------------------------------

// A registry of an earlier layout ("ipc2", without the waiters' queue) is
// refused and left as it is;
// a FIFO planted at the registry's or the semaphore's name is refused, not
// waited on, by Lock and by the snapshot `ipclock list` reads.
void ForeignFilesAreRefused(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string old_resource = UniqueResource("old-format");
  const Paths old = PathsOf(old_resource);
  {
    const int fd = open(old.reg.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    std::vector<uint8_t> page(sizeof(ipclock::RegistryPage), 0);
    const uint32_t magic = 0x69706332;
    memcpy(page.data(), &magic, sizeof(magic));
    assert_int_equal(write(fd, page.data(), page.size()), static_cast<ssize_t>(page.size()));
    close(fd);
  }
  Lock lock = MakeLock(store, old_resource);
  absl::StatusOr<bool> got = lock.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(got.status(), "not an initialized registry of this ipclock version");
  Mapped m = MapRegistry(old.reg);
  assert_non_null(m.bytes);
  for (size_t i = 4; i < m.size; ++i) assert_int_equal(m.bytes[i], 0);
  munmap(m.bytes, m.size);
  close(m.fd);
  unlink(old.reg.c_str());

  // A FIFO at the registry's name.
  const std::string resource = UniqueResource("fifo");
  const Paths p = PathsOf(resource);
  assert_int_equal(mkfifo(p.reg.c_str(), 0600), 0);
  pid_t child = ForkChild([&] {
    // A file of the wrong type, whoever reads it.
    Lock l = MakeLock(store, resource);
    if (!absl::IsInvalidArgument(l.TryAcquire().status())) return 2;
    absl::StatusOr<ipclock::RegistrySnapshot> snap =
        ipclock::ReadRegistrySnapshot(ipclock::PosixSemaphoreName(resource) + ".reg");
    return absl::IsInvalidArgument(snap.status()) ? 0 : 3;
  });
  assert_int_equal(WaitChild(child, 10), 0);
  unlink(p.reg.c_str());

  // A FIFO at the semaphore's name, beside a registry in use.
  Signal locked;
  pid_t maker = HoldInChild(store, resource, &locked);
  assert_int_equal(locked.Wait(), 'x');
  assert_int_equal(unlink(p.sem.c_str()), 0);
  assert_int_equal(mkfifo(p.sem.c_str(), 0600), 0);
  child = ForkChild([&] {
    Lock l = MakeLock(store, resource);
    absl::StatusOr<bool> r = l.TryAcquire();
    if (!absl::IsInvalidArgument(r.status())) return 2;
    return r.status().message().find("is not a semaphore") != absl::string_view::npos ? 0 : 3;
  });
  assert_int_equal(WaitChild(child, 10), 0);
  kill(maker, SIGKILL);
  assert_int_equal(WaitChild(maker), 128 + SIGKILL);
  unlink(p.reg.c_str());
  unlink(p.sem.c_str());
}

// --- Creation that fails or dies half-way -----------------------------------------

// Every system call of an attachment failing in turn, at each of its calls
// (open, create, chmod, ftruncate, mmap, flock, fstat, the mutex, the
// semaphore's write): the error names what failed, nothing is held, and
// nothing is left in /dev/shm, not even an uninitialized registry (a failed
// sem_open with EMFILE used to leave one). The next attachment works.
void FailedCreationLeavesNothing(void**) {
  struct Point {
    ipclock::FaultPoint point;
    int err;
  };
  std::shared_ptr<Store> store = OpenStore("posix-semaphore:?prefix=ipclock-fault&keep_idle=0");
  for (Point p : {Point{ipclock::FaultPoint::kOpen, EMFILE},
                  Point{ipclock::FaultPoint::kChmod, EPERM},
                  Point{ipclock::FaultPoint::kTruncate, ENOSPC},
                  Point{ipclock::FaultPoint::kMmap, ENOMEM},
                  Point{ipclock::FaultPoint::kFlock, ENOLCK},
                  Point{ipclock::FaultPoint::kStat, EIO},
                  Point{ipclock::FaultPoint::kMutexInit, EAGAIN},
                  Point{ipclock::FaultPoint::kWrite, ENOSPC},
                  Point{ipclock::FaultPoint::kLink, ENOSPC},
                  Point{ipclock::FaultPoint::kUnlink, EPERM}}) {
    for (int skip = 0; skip < 6; ++skip) {
      const std::string resource = UniqueResource("create-fault");
      Lock lock = MakeLock(store, resource);
      ipclock::InjectFault(p.point, p.err, 1, skip);
      absl::StatusOr<bool> got = lock.TryAcquire();
      ipclock::ClearFaults();
      if (!got.ok()) {
        assert_false(lock.is_acquired());
        if (ObjectsExist(resource, "ipclock-fault")) {
          fail_msg("failure after %d calls (%s) left files in /dev/shm",
                   skip, got.status().ToString().c_str());
        }
        assert_true(TryOrFail(lock));
      }
      ASSERT_OK(lock.Release());
      Drop(lock);
      if (ObjectsExist(resource, "ipclock-fault")) fail_msg("files left after a full cycle");
    }
  }
}

// The last user's removal of the pair fails (EPERM at either unlink): what
// it leaves behind is removed by the next last user, and never blocks.
void FailedRemovalIsFinishedLater(void**) {
  std::shared_ptr<Store> store = OpenStore("posix-semaphore:?prefix=ipclock-fault&keep_idle=0");
  for (int skip = 0; skip < 2; ++skip) {
    const std::string resource = UniqueResource("unlink-fault");
    {
      Lock lock = MakeLock(store, resource);
      assert_true(TryOrFail(lock));
      ASSERT_OK(lock.Release());
      ipclock::InjectFault(ipclock::FaultPoint::kUnlink, EPERM, 1, skip);
    }
    ipclock::ClearFaults();
    assert_true(ObjectsExist(resource, "ipclock-fault"));
    {
      Lock lock = MakeLock(store, resource);
      assert_true(TryOrFail(lock));
      ASSERT_OK(lock.Release());
    }
    assert_false(ObjectsExist(resource, "ipclock-fault"));
  }
}

// Processes killed at random instants while they make, use and remove the
// pair of fresh resources: each time, the next process gets the lock at
// once (no half-made registry wedges it), and once nobody uses a resource,
// nothing of it is left in /dev/shm.
void CreationKilledAtRandomLeavesNothing(void**) {
  std::mt19937 rng(static_cast<uint32_t>(getpid()));
  for (int round = 0; round < 150; ++round) {
    const std::string resource = UniqueResource("crash");
    pid_t victim = ForkChild([&] {
      for (;;) {
        absl::StatusOr<std::shared_ptr<Store>> own =
            ipclock::StoreFromDsn("posix-semaphore:?prefix=ipclock-crash&keep_idle=0");
        if (!own.ok()) return 2;
        Lock l = MakeLock(*own, resource);
        if (!l.TryAcquire().ok()) return 3;
      }
    });
    usleep(static_cast<useconds_t>(rng() % 3000));
    kill(victim, SIGKILL);
    assert_int_equal(WaitChild(victim), 128 + SIGKILL);
    {
      std::shared_ptr<Store> store =
          OpenStore("posix-semaphore:?prefix=ipclock-crash&keep_idle=0");
      Lock lock = MakeLock(store, resource);
      absl::StatusOr<bool> got = lock.TryAcquireFor(absl::Seconds(5));
      if (!got.ok() || !*got) {
        fail_msg("round %d: %s", round, got.ok() ? "busy" : got.status().ToString().c_str());
      }
      ASSERT_OK(lock.Release());
    }
    if (ObjectsExist(resource, "ipclock-crash")) fail_msg("round %d: files left", round);
  }
}

// A process with write access scribbles over the registry (the header
// words, the holder word, the slots; not the mutex, which no one can
// defend) while others attach, take, check, release and list it. Errors and
// lost locks are expected; a crash (an index taken from the page without a
// bounds check) or a hang is not.
void ScribblerCrashesNothing(void**) {
  const std::string resource = UniqueResource("scribble");
  const Paths p = PathsOf(resource);
  std::shared_ptr<Store> store = OpenStore();
  Lock keeper = MakeLock(store, resource);
  assert_true(TryOrFail(keeper));
  ASSERT_OK(keeper.Release());
  auto* stop = SharedMemory<std::atomic<int>>();
  pid_t scribbler = ForkChild([&] {
    Mapped m = MapRegistry(p.reg);
    if (m.bytes == nullptr) return 2;
    std::mt19937 r(static_cast<uint32_t>(getpid()));
    const size_t words[] = {kOffPermits, kOffOwner, kOffHolders, kOffOrphans};
    // Ends by itself too, should the test fail before it says stop.
    const double until = NowSeconds() + 20.0;
    while (stop->load() == 0 && NowSeconds() < until) {
      uint32_t v = r();
      if (r() % 2 == 0) v %= 300;
      size_t off = r() % 3 == 0 ? kOffSlots + (r() % 256) * 16 + (r() % 4) * 4
                                : words[r() % 4];
      memcpy(m.bytes + off, &v, sizeof(v));
      if (r() % 64 == 0) usleep(50);
    }
    return 0;
  });
  std::vector<pid_t> users;
  for (int u = 0; u < 3; ++u) {
    users.push_back(ForkChild([&] {
      const double until = NowSeconds() + 2.0;
      while (NowSeconds() < until) {
        absl::StatusOr<std::shared_ptr<Store>> own = ipclock::StoreFromDsn("posix-semaphore");
        if (!own.ok()) return 2;
        absl::StatusOr<Lock> l = Lock::Create(*own, resource);
        if (!l.ok()) return 3;
        for (int i = 0; i < 50; ++i) {
          absl::StatusOr<bool> got = l->TryAcquireFor(absl::Milliseconds(1));
          if (got.ok() && *got) {
            l->CheckAcquired().IgnoreError();
            l->Release().IgnoreError();
          }
          ipclock::ReadRegistrySnapshot(ipclock::PosixSemaphoreName(resource) + ".reg")
              .status()
              .IgnoreError();
        }
      }
      return 0;
    }));
  }
  std::vector<int> codes;
  for (pid_t u : users) codes.push_back(WaitChild(u, 60));
  stop->store(1);
  assert_int_equal(WaitChild(scribbler), 0);
  for (int code : codes) assert_int_equal(code, 0);
  Drop(keeper);
  store.reset();
  unlink(p.reg.c_str());
  unlink(p.sem.c_str());
}

}  // namespace

int main() {
  static SemaphoreSuite kSuite = {"posix-semaphore", "posix-semaphore:?keep_idle=0",
                                        [](const std::string& r) { return ObjectsExist(r); }};
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
      cmocka_unit_test_prestate(CountingPermitsAcrossProcesses, &kSuite),
      cmocka_unit_test_prestate(PermitsMismatchIsRefused, &kSuite),
      cmocka_unit_test_prestate(FullCyclesUnderKills, &kSuite),
      cmocka_unit_test(PairDeletedWhileHeld),
      cmocka_unit_test(WatchSeesDeletionAtOnce),
      cmocka_unit_test(HolderRewrittenUnderUs),
      cmocka_unit_test(ForeignFilesAreRefused),
      cmocka_unit_test(FailedCreationLeavesNothing),
      cmocka_unit_test(FailedRemovalIsFinishedLater),
      cmocka_unit_test(CreationKilledAtRandomLeavesNothing),
      cmocka_unit_test(ScribblerCrashesNothing),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
