// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Another user on the host attacks our locks. The attacker is `nobody`
// (uid/gid 65534), played by a forked child that drops to it with
// setresgid/setresuid; the victim is the test, as root. Tests that need the
// two users skip when not run as root.
//
// Covered in flock_store_test, not repeated: symlinks and FIFOs planted by
// ourselves at a lock file's path, a symlinked lock dir, a world-writable
// dir without the sticky bit, a dir owned by another user.
//
// Also here, for any user: a password in a DSN never shows in an error.

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/c.h"
#include "ipclock/lock.h"
#include "ipclock/stores/posix_semaphore_store.h"
#include "ipclock/stores/semaphore_store.h"
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

constexpr uid_t kNobody = kNobodyUid;

bool Has(const absl::Status& s, absl::string_view needle) {
  return absl::string_view(s.message()).find(needle) != absl::string_view::npos;
}

// The attacker's acquisition through `dsn` must fail with PermissionDenied.
// Exit codes: 0 refused as expected, 1 acquired, 2 another outcome.
int AttackerAcquire(const std::string& dsn, const std::string& resource) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) return absl::IsPermissionDenied(store.status()) ? 0 : 2;
  absl::StatusOr<Lock> lock = Lock::Create(*store, resource);
  if (!lock.ok()) return 2;
  absl::StatusOr<bool> got = lock->TryAcquire();
  if (got.ok()) return *got ? 1 : 2;
  if (!absl::IsPermissionDenied(got.status())) {
    fprintf(stderr, "attacker: %s\n", got.status().ToString().c_str());
    return 2;
  }
  return 0;
}

// Whether our lock is intact: still held by `ours`, and refused to a
// second holder. A plain answer, not an assertion, so that callers release
// IPC objects before they assert (a failed assertion skips destructors).
bool StillOurs(Lock& ours, const std::shared_ptr<Store>& store,
               const std::string& resource) {
  if (!ours.CheckAcquired().ok()) return false;
  absl::StatusOr<Lock> rival = Lock::Create(store, resource);
  if (!rival.ok()) return false;
  absl::StatusOr<bool> got = rival->TryAcquire();
  return got.ok() && !*got;
}

// --- Lock dirs and files ------------------------------------------------------

// A shared sticky dir (like /tmp): another user can add entries, so a
// symlink they plant at our lock file's path must be refused, and they
// cannot remove or replace the file we lock.
void SymlinkPlantedByAnotherUser(void**) {
  SKIP_UNLESS_ROOT();
  const std::string parent = MakeTempDir();
  assert_int_equal(chmod(parent.c_str(), 0711), 0);  // let nobody reach `dir`
  const std::string dir = parent + "/shared";
  assert_int_equal(mkdir(dir.c_str(), 01777), 0);
  assert_int_equal(chmod(dir.c_str(), 01777), 0);
  auto store = OpenStoreOrFail("flock://" + dir);

  const std::string victim = MakeTempDir() + "/victim";
  assert_true(WriteFile(victim, "owned"));
  const std::string planted = dir + "/" + ipclock::FlockFileName("planted");
  assert_int_equal(AsNobody([&] {
                     return symlink(victim.c_str(), planted.c_str()) == 0 ? 0 : 1;
                   }),
                   0);
  Lock lock = LockOrFail(store, "planted");
  absl::StatusOr<bool> got = lock.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
  assert_true(Has(got.status(), "symbolic link"));
  assert_false(lock.is_acquired());
  struct stat st;
  assert_int_equal(stat(victim.c_str(), &st), 0);
  assert_int_equal(st.st_size, 5);  // "owned", untouched

  // Our own lock file in the shared dir: the sticky bit keeps the attacker
  // from unlinking it or renaming another file over it.
  Lock ours = HeldOrFail(store, "ours");
  const std::string path = dir + "/" + ipclock::FlockFileName("ours");
  assert_int_equal(AsNobody([&] {
                     if (unlink(path.c_str()) == 0) return 1;
                     const std::string decoy = dir + "/decoy";
                     int fd = open(decoy.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
                     if (fd < 0) return 2;
                     close(fd);
                     return rename(decoy.c_str(), path.c_str()) == 0 ? 3 : 0;
                   }),
                   0);
  assert_true(StillOurs(ours, store, "ours"));
}

// The user who owns the parent of our lock dir can move our dir away and
// put one of their own in its place. Such a parent is refused up front
// (naming it and its owner); when it changes hands after the store opened
// the dir, the holder is told its dir was moved, and neither a new store nor
// the old one will use their dir or a symlink they plant.
void LockDirSwappedByOwnerOfParent(void**) {
  SKIP_UNLESS_ROOT();
  const std::string parent = MakeTempDir() + "/theirs";
  assert_int_equal(mkdir(parent.c_str(), 0755), 0);
  assert_int_equal(chmod(parent.substr(0, parent.rfind('/')).c_str(), 0755), 0);
  const std::string dir = parent + "/locks";
  auto store = OpenStoreOrFail("flock://" + dir);  // made by us, 0700, parent ours
  Lock ours = HeldOrFail(store, "job");
  assert_int_equal(chown(parent.c_str(), kNobody, kNobody), 0);
  absl::StatusOr<std::shared_ptr<Store>> swapped = ipclock::StoreFromDsn("flock://" + dir);
  ASSERT_CODE(swapped, absl::StatusCode::kPermissionDenied);
  assert_true(Has(swapped.status(), absl::StrCat("its ancestor ", parent, " (owner uid 65534")));

  assert_int_equal(AsNobody([&] {
                     if (rename(dir.c_str(), (parent + "/old").c_str()) != 0) return 1;
                     if (mkdir(dir.c_str(), 0777) != 0 || chmod(dir.c_str(), 0777) != 0) {
                       return 2;
                     }
                     return 0;
                   }),
                   0);
  swapped = ipclock::StoreFromDsn("flock://" + dir);
  ASSERT_CODE(swapped, absl::StatusCode::kPermissionDenied);
  assert_true(Has(swapped.status(), "owner uid 65534"));

  assert_int_equal(AsNobody([&] {
                     if (rmdir(dir.c_str()) != 0) return 1;
                     return symlink((parent + "/old").c_str(), dir.c_str()) == 0 ? 0 : 2;
                   }),
                   0);
  swapped = ipclock::StoreFromDsn("flock://" + dir);
  ASSERT_CODE(swapped, absl::StatusCode::kPermissionDenied);
  // Our held lock still locks its inode, but a process opening the path now
  // finds their dir: the lock is lost, and the check says so.
  absl::Status held = ours.CheckAcquired();
  ASSERT_CODE(held, absl::StatusCode::kAborted);
  assert_true(Has(held, "renamed or replaced"));
  // The old store does not follow their link or make a dir under their
  // parent either.
  Lock next = LockOrFail(store, "job");
  ASSERT_CODE(next.TryAcquire(), absl::StatusCode::kPermissionDenied);
}

// --- IPC objects at the default mode 0600 -------------------------------------

// Holds `resource` through the store `dsn` while nobody, another user,
// tries to take it through `dsn` (which must be refused) and then to harm
// what the lock lives in with `harm` (0: every attempt refused, else 20 and
// up). The attack must fail throughout, and the lock stay ours.
void CheckHeldAgainstNobody(const std::string& dsn, const std::string& resource,
                            const std::function<int()>& harm) {
  auto store = OpenStoreOrFail(dsn);
  Lock ours = HeldOrFail(store, resource);
  const int attack = AsNobody([&] {
    int refused = AttackerAcquire(dsn, resource);
    if (refused != 0) return 10 + refused;
    return harm();
  });
  const bool intact = StillOurs(ours, store, resource);
  ASSERT_OK(ours.Release());
  assert_int_equal(attack, 0);
  assert_true(intact);
}

void ShmSegmentOfAnotherUser(void**) {
  SKIP_UNLESS_ROOT();
  const std::string name = UniqueShmName("hostile");
  const std::string file = "/dev/shm/ipclock." + name;
  CheckHeldAgainstNobody("shm://" + name, "job", [&] {
    // Nor can the file be opened, truncated or removed.
    if (open(file.c_str(), O_RDWR | O_CLOEXEC) >= 0) return 20;
    if (truncate(file.c_str(), 0) == 0) return 21;
    if (unlink(file.c_str()) == 0) return 22;
    return 0;
  });
}

void SysvSemaphoreOfAnotherUser(void**) {
  SKIP_UNLESS_ROOT();
  const std::string r = UniqueResource("hostile-sysv");
  absl::StatusOr<int32_t> key = ipclock::SemaphoreIpcKey(r, ipclock::SemaphoreKeyScheme::kMd5);
  ASSERT_OK(key);
  CheckHeldAgainstNobody("semaphore", r, [&] {
    // Nor can the set be removed or reset (semget with no
    // mode asked finds it; using it is what is checked).
    int id = semget(*key, 0, 0);
    if (id < 0) return 0;
    if (semctl(id, 0, IPC_RMID) == 0) return 20;
    if (semctl(id, 0, SETVAL, 1) == 0) return 21;
    return 0;
  });
}

void PosixSemaphoreOfAnotherUser(void**) {
  SKIP_UNLESS_ROOT();
  const std::string r = UniqueResource("hostile-posix");
  const std::string name = ipclock::PosixSemaphoreName(r);
  CheckHeldAgainstNobody("posix-semaphore", r, [&] {
    // /dev/shm is sticky: our files cannot be removed.
    if (unlink(("/dev/shm/sem." + name.substr(1)).c_str()) == 0) return 20;
    if (unlink(("/dev/shm" + name + ".reg").c_str()) == 0) return 21;
    return 0;
  });
}

// --- Secrets --------------------------------------------------------------------

// Passwords in DSNs of server stores, compiled in or not, malformed or
// pointing at a port nobody listens on: no error, description or C API
// message may show them, raw or percent-encoded.
void PasswordsNeverInErrors(void**) {
  constexpr absl::string_view kSecret = "Sup3rS3cretPw";
  const std::string dsns[] = {
      "redis://user:Sup3rS3cretPw@127.0.0.1:1/0",
      "redis://:Sup3rS3cretPw@127.0.0.1:1",
      "redis://:Sup3rS3cretPw@127.0.0.1:1?no_such_option=1",
      "redis://:Sup3rS3cretPw@127.0.0.1:99999",
      "rediss://:Sup3rS3cretPw@[::1]:1/0",
      "redis://:Sup3r%53cretPw@127.0.0.1:1",
      "postgresql+advisory://app:Sup3rS3cretPw@127.0.0.1:1/db",
      "postgresql+advisory://app:Sup3rS3cretPw@127.0.0.1:1/db?no_such_option=1",
      "postgres://app:Sup3r%53cretPw@127.0.0.1:1/db",
      "pgsql+advisory://app:Sup3rS3cretPw@127.0.0.1:1/db",
      "flock://app:Sup3rS3cretPw@host/dir",
      "no-such-store://app:Sup3rS3cretPw@host",
      "redis://:Sup3rS3cretPw@127.0.0.1:1/0?bad%zz",
  };
  auto clean = [&](absl::string_view text, const std::string& dsn) {
    if (text.find(kSecret) != absl::string_view::npos ||
        text.find("Sup3r%53cretPw") != absl::string_view::npos) {
      fail_msg("password shown for %s: %s", dsn.c_str(), std::string(text).c_str());
    }
  };
  for (const std::string& dsn : dsns) {
    absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
    if (store.ok()) {
      // Stores that connect lazily fail at the first acquisition instead.
      clean((*store)->Describe(), dsn);
      absl::StatusOr<Lock> lock = Lock::Create(*store, "secret-test");
      ASSERT_OK(lock);
      absl::StatusOr<bool> got = lock->TryAcquire();
      assert_false(got.ok());
      clean(got.status().ToString(), dsn);
    } else {
      clean(store.status().ToString(), dsn);
    }
    ipclock_store* handle = nullptr;
    char* why = nullptr;
    if (ipclock_store_open(dsn.c_str(), nullptr, &handle, &why) == 0) {
      clean(ipclock_store_describe(handle), dsn);
      ipclock_lock* lock = nullptr;
      if (ipclock_lock_create(handle, "secret-test", 11, nullptr, &lock, nullptr) == 0) {
        assert_int_not_equal(ipclock_lock_acquire(lock, IPCLOCK_NONBLOCK, 0), 0);
        clean(ipclock_lock_error(lock), dsn);
        ipclock_lock_destroy(lock);
      }
      ipclock_store_close(handle);
    } else {
      assert_non_null(why);
      clean(why, dsn);
    }
    free(why);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(SymlinkPlantedByAnotherUser),
      cmocka_unit_test(LockDirSwappedByOwnerOfParent),
      cmocka_unit_test(ShmSegmentOfAnotherUser),
      cmocka_unit_test(SysvSemaphoreOfAnotherUser),
      cmocka_unit_test(PosixSemaphoreOfAnotherUser),
      cmocka_unit_test(PasswordsNeverInErrors),
  };
  return cmocka_run_group_tests_name("hostile_host", tests, nullptr, nullptr);
}
