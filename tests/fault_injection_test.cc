// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The host breaks under a running store: the lock dir is removed, made
// read-only or replaced by a symbolic link, a POSIX semaphore's files are
// deleted, descriptors run out, the filesystem fills up. Each case must end
// in a clear error or a safe recovery, and never in a lock held twice.
//
// Covered elsewhere, not repeated here: an unlinked shm segment
// (shm_store_test RemovedSegmentIsDetected), a removed SysV set
// (sysv_semaphore_test WaiterSurvivesSetRemoval), a lock file unlinked
// under a waiter and a dir removed between locks (flock_store_test).
//
// Mounting a tmpfs (read-only, or tiny to fill it) needs root; those tests
// skip otherwise. Every mount is undone by the group teardown, and by an
// atexit handler if a test dies half-way.

#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock/lock.h"
#include "ipclock/stores/posix_semaphore_store.h"
#include "ipclock/store_factory.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

bool Has(const absl::Status& s, absl::string_view needle) {
  return absl::string_view(s.message()).find(needle) != absl::string_view::npos;
}

void AssertHas(const absl::Status& s, absl::string_view needle) {
  if (!Has(s, needle)) {
    fail_msg("expected \"%s\" in: %s", std::string(needle).c_str(), s.ToString().c_str());
  }
}

// --- tmpfs mounts (root only) -------------------------------------------------

std::vector<std::string>* g_mounts = nullptr;

void UnmountAllNow() {
  if (g_mounts == nullptr) return;
  for (const std::string& m : *g_mounts) {
    // MNT_DETACH: a descriptor a failed test left open must not keep the
    // mount (and a tmpfs full of data) around after the suite.
    if (umount2(m.c_str(), MNT_DETACH) != 0) perror(("umount " + m).c_str());
    rmdir(m.c_str());
  }
  g_mounts->clear();
}

int UnmountAll(void**) {
  UnmountAllNow();
  return 0;
}

// Mounts a fresh tmpfs with `options` on a new dir and returns its path.
// Skips the test, saying why, where root may not mount (EPERM: a container
// without CAP_SYS_ADMIN, or whose seccomp filter refuses mount(2)); call it
// before the test makes any object that a skip would leak.
std::string MountTmpfs(const char* options) {
  char tmpl[] = "/tmp/ipclock-mnt-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) fail_msg("mkdtemp: %s", strerror(errno));
  if (mount("tmpfs", tmpl, "tmpfs", 0, options) != 0) {
    int err = errno;
    rmdir(tmpl);
    if (err == EPERM) {
      fprintf(stderr, "cannot mount a tmpfs here (mount: %s); skipped\n", strerror(err));
      skip();
    }
    fail_msg("mount tmpfs (%s) on %s: %s", options, tmpl, strerror(err));
  }
  if (g_mounts == nullptr) {
    g_mounts = new std::vector<std::string>();
    atexit(UnmountAllNow);
  }
  g_mounts->push_back(tmpl);
  return tmpl;
}

// Fills the filesystem at `dir` to the last byte (ENOSPC), or its inodes.
void FillBlocks(const std::string& dir) {
  std::string path = dir + "/filler";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) fail_msg("open filler: %s", strerror(errno));
  char buf[4096] = {0};
  while (write(fd, buf, sizeof(buf)) > 0) {
  }
  // The last partial page, byte by byte.
  while (write(fd, buf, 1) > 0) {
  }
  close(fd);
}

void FillInodes(const std::string& dir) {
  for (int i = 0;; ++i) {
    std::string path = absl::StrCat(dir, "/f", i);
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == ENOSPC) return;
      fail_msg("filling inodes: %s", strerror(errno));
    }
    close(fd);
  }
}

// --- The lock dir -------------------------------------------------------------

// CheckDeletedUnderHolderAndWaiter with stores of the children's own, the
// holder finding out when it checks.
void DeletedUnderHolderAndWaiter(const std::string& dsn, const std::string& r,
                                 const std::function<void()>& remove) {
  DeletedUnderWaiter check;
  check.store = OpenStoreOrFail(dsn);
  check.dsn = dsn;
  check.resource = r;
  check.remove = remove;
  check.holder_finds_out = [](Lock& a) { assert_false(ipclock_test::IsStillHeld(a)); };
  CheckDeletedUnderHolderAndWaiter(check);
}

// The whole lock dir is deleted; C's store re-creates it, and B's store,
// opened before, must find the new dir rather than the deleted one.
void LockDirRemovedUnderWaiter(void**) {
  const std::string dir = MakeTempDir() + "/locks";
  DeletedUnderHolderAndWaiter("flock://" + dir, UniqueResource("dir-removed"), [&] {
    assert_int_equal(system(("rm -rf '" + dir + "'").c_str()), 0);
  });
}


// The dir is deleted and a symbolic link planted in its place: re-creating
// the dir must not follow it.
void LockDirReplacedBySymlink(void**) {
  const std::string base = MakeTempDir();
  const std::string dir = base + "/locks";
  const std::string elsewhere = base + "/elsewhere";
  assert_int_equal(mkdir(elsewhere.c_str(), 0700), 0);
  auto store = OpenStoreOrFail("flock://" + dir);
  Lock before = LockOrFail(store, "before");
  TakeAndRelease(before);

  assert_int_equal(system(("rm -rf '" + dir + "'").c_str()), 0);
  assert_int_equal(symlink(elsewhere.c_str(), dir.c_str()), 0);
  Lock after = LockOrFail(store, "after");
  absl::StatusOr<bool> got = after.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
  AssertHas(got.status(), "symbolic link");
  assert_false(after.is_acquired());
  // Nothing was created through the link.
  assert_int_equal(system(("test -z \"$(ls -A '" + elsewhere + "')\"").c_str()), 0);
  // A new store on the path is refused the same way.
  ASSERT_CODE(ipclock::StoreFromDsn("flock://" + dir), absl::StatusCode::kInvalidArgument);
}

// A lock dir that is (or becomes) read-only: a clear error, no lock.
void ReadOnlyLockDir(void**) {
  SKIP_UNLESS_ROOT();
  const std::string mnt = MountTmpfs("size=1m,mode=0700");
  // idle_files=0: a store's idle lock files are open for writing, and so
  // would make the remount fail with EBUSY.
  auto store = OpenStoreOrFail("flock://" + mnt + "?idle_files=0");
  {
    // A file that exists before the remount, and a lock that is not held
    // (a descriptor open for writing would make the remount fail EBUSY).
    Lock existing = HeldOrFail(store, "existing");
  }
  assert_int_equal(mount("tmpfs", mnt.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY,
                         "size=1m,mode=0700"),
                   0);
  for (const char* r : {"existing", "new"}) {
    Lock lock = LockOrFail(store, r);
    absl::StatusOr<bool> got = lock.TryAcquire();
    ASSERT_CODE(got, absl::StatusCode::kPermissionDenied);
    AssertHas(got.status(), "EROFS");
    AssertHas(got.status(), mnt);
    AssertHas(got.status(), absl::StrCat("\"", r, "\""));
    assert_false(lock.is_acquired());
  }
  // A new store refuses the dir up front.
  absl::StatusOr<std::shared_ptr<Store>> fresh = ipclock::StoreFromDsn("flock://" + mnt);
  ASSERT_CODE(fresh, absl::StatusCode::kPermissionDenied);
  AssertHas(fresh.status(), "not writable");
}

// A full filesystem: no inode for a new lock file, or no block for the
// holder record of a new one. Both fail closed, and the lock is free again
// for the next holder once there is room.
void FullFilesystem(void**) {
  SKIP_UNLESS_ROOT();
  // No blocks left: the empty lock file is created, its record cannot be.
  const std::string mnt = MountTmpfs("size=64k,mode=0700");
  auto store = OpenStoreOrFail("flock://" + mnt);
  Lock seasoned = LockOrFail(store, "seasoned");  // has its record already
  TakeAndRelease(seasoned);
  FillBlocks(mnt);
  Lock fresh = LockOrFail(store, "fresh");
  absl::StatusOr<bool> got = fresh.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kResourceExhausted);
  AssertHas(got.status(), "ENOSPC");
  AssertHas(got.status(), "holder record");
  assert_false(fresh.is_acquired());
  // The failed holder let go of the flock: another process is not kept out
  // by a lock nobody holds, and gets the same clear error.
  pid_t other = ForkChild([&] {
    absl::StatusOr<Lock> lock = Lock::Create(store, "fresh");
    if (!lock.ok()) return 2;
    absl::StatusOr<bool> r = lock->TryAcquire();
    return r.status().code() == absl::StatusCode::kResourceExhausted ? 0 : 3;
  });
  assert_int_equal(WaitChild(other), 0);
  // A lock whose record is already written still works on a full disk.
  TakeAndRelease(seasoned);
  // Room again: the same lock works, and exactly one holder gets it.
  assert_int_equal(unlink((mnt + "/filler").c_str()), 0);
  assert_true(*fresh.TryAcquire());
  assert_int_equal(*fresh.fence(), 1);
  Lock rival = LockOrFail(store, "fresh");
  assert_false(*rival.TryAcquire());
  ASSERT_OK(fresh.Release());

  // No inodes left: the lock file cannot be created at all.
  const std::string tiny = MountTmpfs("size=1m,nr_inodes=16,mode=0700");
  auto inode_store = OpenStoreOrFail("flock://" + tiny);
  FillInodes(tiny);
  Lock no_inode = LockOrFail(inode_store, "no-inode");
  got = no_inode.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kResourceExhausted);
  AssertHas(got.status(), "ENOSPC");
  AssertHas(got.status(), "create");
  assert_false(no_inode.is_acquired());
  UnmountAllNow();
}

// --- Descriptors ----------------------------------------------------------------

// In a child with RLIMIT_NOFILE used up: `dsn`'s first acquisition needs a
// descriptor and must fail with ResourceExhausted naming the resource and
// EMFILE, holding nothing; with one descriptor free again it succeeds.
// Exit codes: 0 as expected, 10+ which check failed.
int AcquireWithoutDescriptors(const std::string& dsn, const std::string& resource) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) return 10;
  absl::StatusOr<Lock> lock = Lock::Create(*store, resource);
  if (!lock.ok()) return 11;
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 12;
  lim.rlim_cur = 64;
  if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return 13;
  std::vector<int> spare;
  for (;;) {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) break;
    spare.push_back(fd);
  }
  if (errno != EMFILE || spare.empty()) return 14;
  absl::StatusOr<bool> got = lock->TryAcquire();
  if (got.ok()) return 15;
  if (got.status().code() != absl::StatusCode::kResourceExhausted) {
    fprintf(stderr, "%s\n", got.status().ToString().c_str());
    return 16;
  }
  if (!Has(got.status(), "EMFILE") || !Has(got.status(), resource)) {
    fprintf(stderr, "%s\n", got.status().ToString().c_str());
    return 17;
  }
  if (lock->is_acquired()) return 18;
  // sem_open needs a descriptor beside shm_open's: free a few.
  for (int i = 0; i < 4; ++i) {
    close(spare.back());
    spare.pop_back();
  }
  got = lock->TryAcquire();
  if (!got.ok() || !*got) {
    fprintf(stderr, "after freeing: %s\n", got.status().ToString().c_str());
    return 19;
  }
  return lock->Release().ok() ? 0 : 20;
}

void DescriptorsExhausted(void**) {
  const std::string flock_dsn = "flock://" + MakeTempDir();
  for (const std::string& dsn : {flock_dsn, std::string("posix-semaphore")}) {
    const std::string r = UniqueResource("emfile");
    pid_t child = ForkChild([&] { return AcquireWithoutDescriptors(dsn, r); });
    int code = WaitChild(child);
    if (code != 0) fail_msg("%s: child check %d failed", dsn.c_str(), code);
  }
}

// --- POSIX semaphores ------------------------------------------------------------

// A resource's semaphore and registry are deleted (a cleaner, RemoveIPC).
// Nothing is left in /dev/shm afterwards.
void PosixSemaphoreFilesRemoved(void**) {
  const std::string r = UniqueResource("sem-removed");
  const std::string name = ipclock::PosixSemaphoreName(r);
  const std::string sem_file = "/dev/shm/sem." + name.substr(1);
  const std::string reg_file = "/dev/shm" + name + ".reg";
  DeletedUnderHolderAndWaiter("posix-semaphore", r, [&] {
    assert_int_equal(unlink(sem_file.c_str()), 0);
    assert_int_equal(unlink(reg_file.c_str()), 0);
  });
  struct stat st;
  assert_int_not_equal(stat(sem_file.c_str(), &st), 0);
  assert_int_not_equal(stat(reg_file.c_str(), &st), 0);
}

// A last user that dies between removing the semaphore and removing the
// registry (or a cleaner that took only the semaphore, from users that are
// all gone since) leaves a registry nobody uses: the next user finishes the
// removal and starts afresh, rather than refusing the resource for good.
void PosixRegistryLeftWithoutSemaphore(void**) {
  const std::string r = UniqueResource("sem-half-removed");
  const std::string name = ipclock::PosixSemaphoreName(r);
  const std::string sem_file = "/dev/shm/sem." + name.substr(1);
  const std::string reg_file = "/dev/shm" + name + ".reg";
  pid_t child = ForkChild([&] {
    absl::StatusOr<std::shared_ptr<Store>> own = ipclock::StoreFromDsn("posix-semaphore");
    if (!own.ok()) return 2;
    absl::StatusOr<Lock> lock = Lock::Create(*own, r);
    if (!lock.ok() || !lock->TryAcquire().value_or(false)) return 3;
    if (unlink(sem_file.c_str()) != 0) return 4;
    _exit(0);  // dies holding, attached, without any release
  });
  assert_int_equal(WaitChild(child), 0);
  struct stat st;
  assert_int_equal(stat(reg_file.c_str(), &st), 0);
  auto store = OpenStoreOrFail("posix-semaphore");
  {
    Lock lock = HeldOrFail(store, r);
    Lock rival = LockOrFail(store, r);
    assert_false(*rival.TryAcquire());
    ASSERT_OK(lock.Release());
  }
  store.reset();  // the pair lives while a Lock, or the store keeping it idle, does
  assert_int_not_equal(stat(sem_file.c_str(), &st), 0);
  assert_int_not_equal(stat(reg_file.c_str(), &st), 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(LockDirRemovedUnderWaiter),
      cmocka_unit_test(LockDirReplacedBySymlink),
      cmocka_unit_test_teardown(ReadOnlyLockDir, UnmountAll),
      cmocka_unit_test_teardown(FullFilesystem, UnmountAll),
      cmocka_unit_test(DescriptorsExhausted),
      cmocka_unit_test(PosixSemaphoreFilesRemoved),
      cmocka_unit_test(PosixRegistryLeftWithoutSemaphore),
  };
  return cmocka_run_group_tests_name("fault_injection", tests, nullptr, nullptr);
}
