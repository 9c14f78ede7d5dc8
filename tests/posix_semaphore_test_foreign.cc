// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The POSIX semaphore store's tests of files that are not its own, and of
// creation that fails or dies half-way (injected faults, kill -9 at random,
// a scribbler on the registry), run by posix_semaphore_test.cc's table.

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

using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

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
  KillChild(maker);
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
      TakeAndRelease(lock);
      ipclock::InjectFault(ipclock::FaultPoint::kUnlink, EPERM, 1, skip);
    }
    ipclock::ClearFaults();
    assert_true(ObjectsExist(resource, "ipclock-fault"));
    {
      Lock lock = MakeLock(store, resource);
      TakeAndRelease(lock);
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
    KillChild(victim);
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
  TakeAndRelease(keeper);
  UseWhileAttacked(
      [&](const std::function<bool()>& going_on) {
        Mapped m = MapRegistry(p.reg);
        if (m.bytes == nullptr) return 2;
        std::mt19937 r(static_cast<uint32_t>(getpid()));
        const size_t words[] = {kOffPermits, kOffOwner, kOffHolders, kOffOrphans};
        while (going_on()) {
          uint32_t v = r();
          if (r() % 2 == 0) v %= 300;
          size_t off = r() % 3 == 0 ? kOffSlots + (r() % 256) * 16 + (r() % 4) * 4
                                    : words[r() % 4];
          memcpy(m.bytes + off, &v, sizeof(v));
          if (r() % 64 == 0) usleep(50);
        }
        return 0;
      },
      [&] {
        return TryCheckRelease("posix-semaphore", resource, 1, 50, absl::Milliseconds(1), [&] {
          ipclock::ReadRegistrySnapshot(ipclock::PosixSemaphoreName(resource) + ".reg")
              .status()
              .IgnoreError();
        });
      });
  Drop(keeper);
  store.reset();
  unlink(p.reg.c_str());
  unlink(p.sem.c_str());
}

}  // namespace ipclock_test
