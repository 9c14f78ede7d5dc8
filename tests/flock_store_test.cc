// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// FlockStore behaviour beyond the conformance suite: Symfony's file names,
// lock dir safety, hostile files, lock files that vanish, the holder record,
// and exact-path mode.

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/lock.h"
#include "ipclock/store_factory.h"
#include "flock_test_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::FlockStoreOptions;
using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

std::shared_ptr<Store> StoreIn(const std::string& dir) {
  absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn("flock://" + dir);
  if (!s.ok()) fail_msg("%s", s.status().ToString().c_str());
  return *s;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Contains(const absl::Status& s, const char* text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

void SymfonyFileNames(void**) {
  assert_string_equal(ipclock::FlockFileName("invoice-42").c_str(),
                      "sf.invoice-42.PDBLwhy.lock");
  assert_string_equal(ipclock::FlockFileName("<?php echo \"% hello word ! %\" ?>").c_str(),
                      "sf.-php-echo-hello-word-.Sz2dDSf.lock");
  // Cut to 50 bytes after replacement; UTF-8 is handled byte-wise.
  std::string name = ipclock::FlockFileName(std::string(80, 'a'));
  assert_int_equal(name.size(), 3 + 50 + 1 + 7 + 5);
  assert_string_equal(ipclock::FlockFileName("caf\xc3\xa9/x").substr(0, 9).c_str(), "sf.caf-x.");
}

void LockFileAtSymfonyPath(void**) {
  std::string dir = MakeTempDir();
  auto store = StoreIn(dir);
  Lock lock = HeldOrFail(store, "invoice-42");
  struct stat st;
  std::string path = dir + "/sf.invoice-42.PDBLwhy.lock";
  assert_int_equal(stat(path.c_str(), &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
}

void HolderRecordAndFence(void**) {
  std::string dir = MakeTempDir();
  auto store = StoreIn(dir);
  std::string path = dir + "/" + ipclock::FlockFileName("rec");
  Lock lock = HeldOrFail(store, "rec");
  std::string held = ReadFile(path);
  // The record, then the resource's name that the file's creator wrote.
  assert_int_equal(held.size(), 64 + 22);
  assert_true(held.rfind("ipclock-flock/1 fence=00000000000000000001 held=1 pid=", 0) == 0);
  assert_string_equal(held.substr(64).c_str(), "ipclock-name/1 003\nrec");
  ASSERT_OK(lock.Release());
  assert_true(ReadFile(path).find("held=0") != std::string::npos);
  assert_true(*lock.TryAcquire());
  assert_int_equal(*lock.fence(), 2);
  assert_false(lock.previous_owner_died());
}

void UnsafeDirsRefused(void**) {
  std::string dir = MakeTempDir() + "/open";
  assert_int_equal(mkdir(dir.c_str(), 0777), 0);
  assert_int_equal(chmod(dir.c_str(), 0777), 0);
  auto s = ipclock::StoreFromDsn("flock://" + dir);
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  assert_true(Contains(s.status(), "world-writable"));
  assert_true(Contains(s.status(), dir.c_str()));
  // The sticky bit makes a shared dir safe (others cannot replace our files).
  assert_int_equal(chmod(dir.c_str(), 01777), 0);
  ASSERT_OK(ipclock::StoreFromDsn("flock://" + dir));

  std::string link = MakeTempDir() + "/link";
  assert_int_equal(symlink(dir.c_str(), link.c_str()), 0);
  s = ipclock::StoreFromDsn("flock://" + link);
  ASSERT_CODE(s, absl::StatusCode::kInvalidArgument);
  assert_true(Contains(s.status(), "symbolic link"));

  std::string file = MakeTempDir() + "/file";
  close(open(file.c_str(), O_CREAT | O_WRONLY, 0600));
  ASSERT_CODE(ipclock::StoreFromDsn("flock://" + file), absl::StatusCode::kInvalidArgument);

  if (geteuid() != 0) return;  // chown to another user needs root
  std::string theirs = MakeTempDir() + "/theirs";
  assert_int_equal(mkdir(theirs.c_str(), 0700), 0);
  assert_int_equal(chown(theirs.c_str(), 65534, 65534), 0);
  s = ipclock::StoreFromDsn("flock://" + theirs);
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  assert_true(Contains(s.status(), "owned by uid 65534"));
}

void MissingDirIsCreatedPrivate(void**) {
  std::string dir = MakeTempDir() + "/a/b/c";
  auto store = StoreIn(dir);
  struct stat st;
  assert_int_equal(stat(dir.c_str(), &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  auto shared = ipclock::StoreFromDsn("flock://" + MakeTempDir() +
                                      "/s?dir_mode=0750&file_mode=0666");
  ASSERT_OK(shared);
  Lock lock = HeldOrFail(*shared, "m");
}

void HostileLockFilesRefused(void**) {
  std::string dir = MakeTempDir();
  auto store = StoreIn(dir);
  std::string target = MakeTempDir() + "/victim";
  close(open(target.c_str(), O_CREAT | O_WRONLY, 0600));
  std::string path = dir + "/" + ipclock::FlockFileName("planted-link");
  assert_int_equal(symlink(target.c_str(), path.c_str()), 0);
  Lock lock = LockOrFail(store, "planted-link");
  absl::StatusOr<bool> got = lock.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
  assert_true(Contains(got.status(), "symbolic link"));
  assert_int_equal(ReadFile(target).size(), 0);  // nothing written through it

  std::string fifo = dir + "/" + ipclock::FlockFileName("planted-fifo");
  assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
  Lock on_fifo = LockOrFail(store, "planted-fifo");
  // Must not hang in open(2) and must not lock a FIFO.
  ASSERT_CODE(on_fifo.TryAcquire(), absl::StatusCode::kInvalidArgument);
}

// A tmp cleaner deletes the lock file while A holds it and B waits on it.
// C then creates and locks a new file at the path. When A lets go, B gets
// the old, unlinked inode: it must notice and queue behind C, never run
// beside C.
void UnlinkedWhileWaitingIsReopened(void**) {
  std::string dir = MakeTempDir();
  auto store = StoreIn(dir);
  std::string r = UniqueResource("unlinked");
  std::string path = dir + "/" + ipclock::FlockFileName(r);
  DeletedUnderWaiter check;
  check.store = store;  // B and C use it too, inherited
  check.resource = r;
  check.remove = [&] { assert_int_equal(unlink(path.c_str()), 0); };
  // A's file was deleted under it: released, and A hears of it. B now gets
  // the old inode.
  check.holder_finds_out = [](Lock& a) { ASSERT_CODE(a.Release(), absl::StatusCode::kAborted); };
  CheckDeletedUnderHolderAndWaiter(check);
}

void HeldLockOnUnlinkedFileIsReportedLost(void**) {
  std::string dir = MakeTempDir();
  auto store = StoreIn(dir);
  Lock lock = HeldOrFail(store, "lost");
  assert_int_equal(unlink((dir + "/" + ipclock::FlockFileName("lost")).c_str()), 0);
  absl::Status held = lock.CheckAcquired();
  ASSERT_CODE(held, absl::StatusCode::kAborted);
}

void VanishedDirIsRecreated(void**) {
  std::string dir = MakeTempDir() + "/vanishing";
  auto store = StoreIn(dir);
  Lock first = LockOrFail(store, "v1");
  TakeAndRelease(first);
  std::string cmd = "rm -rf '" + dir + "'";
  assert_int_equal(system(cmd.c_str()), 0);
  Lock second = HeldOrFail(store, "v2");
  struct stat st;
  assert_int_equal(stat(dir.c_str(), &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
}

void ExactPathMode(void**) {
  std::string dir = MakeTempDir();
  std::string data = dir + "/data.txt";
  {
    std::ofstream out(data);
    out << "user data";
  }
  FlockStoreOptions options;
  options.naming = FlockStoreOptions::Naming::kPath;
  auto store = ipclock::NewFlockStore(options);
  ASSERT_OK(store);
  assert_false((*store)->capabilities().fencing);
  Lock lock = HeldOrFail(*store, data);
  Lock rival = LockOrFail(*store, data);
  assert_false(*rival.TryAcquire());
  ASSERT_OK(lock.Release());
  assert_string_equal(ReadFile(data).c_str(), "user data");  // never written
  // A directory can be locked, as with flock(1).
  Lock on_dir = HeldOrFail(*store, dir);
  // A missing file is created.
  Lock fresh = HeldOrFail(*store, dir + "/new.lock");
  // Symlinks are refused.
  std::string link = dir + "/link";
  assert_int_equal(symlink(data.c_str(), link.c_str()), 0);
  Lock via_link = LockOrFail(*store, link);
  ASSERT_CODE(via_link.TryAcquire(), absl::StatusCode::kInvalidArgument);
}

void ErrorsNameStoreResourceAndErrno(void**) {
  std::string dir = MakeTempDir();
  auto store = StoreIn(dir);
  std::string path = dir + "/" + ipclock::FlockFileName("enoent-dir");
  assert_int_equal(mkdir(path.c_str(), 0700), 0);  // a dir where the file goes
  Lock lock = LockOrFail(store, "enoent-dir");
  absl::StatusOr<bool> got = lock.TryAcquire();
  assert_false(got.ok());
  const std::string msg(got.status().message());
  assert_true(msg.find("flock://") != std::string::npos);
  assert_true(msg.find("\"enoent-dir\"") != std::string::npos);
  assert_true(msg.find("[E") != std::string::npos);
}

// In exact-path mode (`ipclock run --file`) a FIFO, a socket or a device at
// the path is refused at once, never opened for blocking and never locked.
void ExactPathRefusesOtherFileTypes(void**) {
  std::string dir = MakeTempDir();
  std::string fifo = dir + "/fifo";
  assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
  FlockStoreOptions options;
  options.naming = FlockStoreOptions::Naming::kPath;
  auto store = ipclock::NewFlockStore(options);
  ASSERT_OK(store);
  for (const std::string& path : {fifo, std::string("/dev/null")}) {
    Lock lock = LockOrFail(*store, path);
    const double start = NowSeconds();
    absl::StatusOr<bool> got = lock.TryAcquire();
    ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
    assert_true(Contains(got.status(), path.c_str()));
    assert_true(Contains(got.status(), path == fifo ? "FIFO" : "character device"));
    assert_true(Contains(got.status(), "nothing was locked"));
    assert_false(lock.is_acquired());
    assert_true(NowSeconds() - start < 5);  // no open(2) that waits for a writer
  }
  // Nobody holds a lock on the FIFO: locking it here succeeds at once.
  int fd = open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  assert_true(fd >= 0);
  assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
  close(fd);
}

// flock locks belong to the open file: two Locks of one process must never
// share one, or both would "hold" the lock. The store's idle file of a
// resource goes to one Lock at a time.
void TwoLocksNeverShareAFile(void**) {
  std::string dir = MakeTempDir();
  auto store = StoreIn(dir);
  const std::string r = UniqueResource("two");
  {
    Lock first = LockOrFail(store, r);
    TakeAndRelease(first);
  }  // its file is idle in the store now
  Lock a = LockOrFail(store, r);
  Lock b = LockOrFail(store, r);
  assert_true(*a.TryAcquire());
  assert_false(*b.TryAcquire());
  ASSERT_OK(a.Release());
  assert_true(*b.TryAcquire());
  assert_false(*a.TryAcquire());
}

int OpenDescriptors() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1;  // the one opendir used
}

// A Lock made and dropped again and again on one resource opens its file
// once; the store keeps at most `idle_files` files open.
void IdleFilesAreReusedAndBounded(void**) {
  std::string dir = MakeTempDir();
  ipclock::FlockStoreOptions options;
  options.idle_files = 4;
  auto store = FlockStoreIn(dir, options);
  const int before = OpenDescriptors();
  for (int i = 0; i < 100; ++i) {
    Lock lock = HeldOrFail(store, "same");
    assert_int_equal(*lock.fence(), i + 1);
    ASSERT_OK(lock.Release());
  }
  assert_int_equal(OpenDescriptors(), before + 1);
  for (int i = 0; i < 10; ++i) {
    Lock lock = HeldOrFail(store, absl::StrCat("many-", i));
  }
  assert_int_equal(OpenDescriptors(), before + 4);
  options.idle_files = 0;
  auto closing = FlockStoreIn(dir, options);
  const int now = OpenDescriptors();
  {
    Lock lock = HeldOrFail(closing, "same");
  }
  assert_int_equal(OpenDescriptors(), now);
}

// Out of descriptors: the store closes its idle files and tries again.
void IdleFilesGiveWayWhenDescriptorsRunOut(void**) {
  std::string dir = MakeTempDir();
  pid_t child = ForkChild([&] {
    auto store = FlockStoreIn(dir);
    for (int i = 0; i < 8; ++i) {
      absl::StatusOr<Lock> l = Lock::Create(store, absl::StrCat("idle-", i));
      if (!l.ok() || !l->TryAcquire().value_or(false)) return 2;
    }
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 3;
    lim.rlim_cur = 64;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return 4;
    std::vector<int> spare;
    for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) spare.push_back(fd);
    absl::StatusOr<Lock> l = Lock::Create(store, "new");
    if (!l.ok()) return 5;
    absl::StatusOr<bool> got = l->TryAcquire();
    if (!got.ok()) {
      fprintf(stderr, "%s\n", got.status().ToString().c_str());
      return 6;
    }
    return *got ? 0 : 7;
  });
  assert_int_equal(WaitChild(child), 0);
}

// fork() copies descriptors, and with them open files: a child must open
// its own file rather than use its parent's idle one, or a lock taken in
// the child would be the parent's too.
void ForkedChildOpensItsOwnFile(void**) {
  std::string dir = MakeTempDir();
  auto store = StoreIn(dir);
  const std::string r = UniqueResource("fork");
  {
    Lock idle = HeldOrFail(store, r);
  }
  Signal holding, done;
  pid_t child = ForkChild([&] {
    absl::StatusOr<Lock> l = Lock::Create(store, r);
    if (!l.ok() || !l->TryAcquire().value_or(false)) return 2;
    holding.Notify();
    done.Wait(20);
    return 0;
  });
  assert_int_equal(holding.Wait(), 'x');
  Lock mine = LockOrFail(store, r);  // the parent's idle file
  assert_false(*mine.TryAcquire());
  done.Notify();
  assert_int_equal(WaitChild(child), 0);
  assert_true(*mine.TryAcquire());
}

// A child's copy of a Lock its parent holds: releasing it in the child must
// not release the parent's lock (they share the open file).
void ChildReleaseLeavesParentsLock(void**) {
  std::string dir = MakeTempDir();
  auto store = StoreIn(dir);
  const std::string r = UniqueResource("inherited");
  Lock held = HeldOrFail(store, r);
  assert_int_equal(WaitChild(ForkChild([&] { return held.Release().ok() ? 0 : 1; })), 0);
  assert_int_equal(WaitChild(ForkChild([&] {
                     auto own = StoreIn(dir);
                     absl::StatusOr<Lock> l = Lock::Create(own, r);
                     return l.ok() && !l->TryAcquire().value_or(true) ? 0 : 1;
                   })),
                   0);
  ASSERT_OK(held.CheckAcquired());
}

// --- fair=true ---------------------------------------------------------------

// The queue lives in the lock file: not with naming=path (a user's file,
// never written), not on a filesystem whose pages processes do not share
// (ramfs here, as NFS or FUSE would be), and not in a lock file this user
// may only read. Each is a clear error at once, never an unfair lock.
void FairNeedsAWritableSharedLockFile(void**) {
  ASSERT_CODE(ipclock::StoreFromDsn("flock://" + MakeTempDir() + "?fair=true&naming=path"),
              absl::StatusCode::kInvalidArgument);
  SKIP_UNLESS_ROOT();
  const std::string base = MakeTempDir();
  // 7: no mount namespace of its own where ramfs could be mounted unseen
  // (a chroot whose / is not a mount point, a container without the right).
  pid_t child = ForkChild([&] {
    if (unshare(CLONE_NEWNS) != 0 || !MakeHoldingMountPrivate(base)) return 7;
    if (mount("ramfs", base.c_str(), "ramfs", 0, "mode=0700") != 0) return 4;
    absl::StatusOr<std::shared_ptr<Store>> s =
        ipclock::StoreFromDsn("flock://" + base + "/locks?fair=true");
    if (!absl::IsFailedPrecondition(s.status())) return 5;
    return Contains(s.status(), "whose pages processes share") ? 0 : 6;
  });
  const int ramfs = WaitChild(child);
  if (ramfs == 7) {
    print_message("skipped the ramfs case: no mount namespace of its own to mount it in here\n");
  } else {
    assert_int_equal(ramfs, 0);
  }

  // nobody's lock dir, holding root's lock file of mode 0644.
  assert_int_equal(chmod(base.c_str(), 0755), 0);
  const std::string locks = base + "/locks";
  assert_int_equal(mkdir(locks.c_str(), 0755), 0);
  assert_int_equal(chown(locks.c_str(), kNobodyUid, kNobodyUid), 0);
  const std::string file = locks + "/" + ipclock::FlockFileName("shared-file");
  const int fd = open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  assert_true(fd >= 0);
  close(fd);
  const std::string dsn = "flock://" + locks + "?fair=true";
  assert_int_equal(AsNobody([&] {
    absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(dsn);
    if (!s.ok()) return 2;
    absl::StatusOr<Lock> lock = Lock::Create(*s, "shared-file");
    if (!lock.ok()) return 3;
    absl::StatusOr<bool> got = lock->TryAcquire();
    if (!absl::IsFailedPrecondition(got.status())) return 4;
    return Contains(got.status(), "read-only for this user") ? 0 : 5;
  }), 0);
}

// A lock file truncated while Locks queue in it (`exec 9>file` in a shell
// truncates): the queue is gone, so its waiters go to the lock, and every
// one of them gets it; nobody crashes on the page that went with it. The
// next waiters queue in a queue made anew.
void FairQueueSurvivesTruncation(void**) {
  const std::string dir = MakeTempDir();
  auto store = ipclock::StoreFromDsn("flock://" + dir + "?fair=true").value();
  Lock holder = HeldOrFail(store, "cut");
  std::vector<pid_t> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(ForkChild([&] {
      Lock mine = LockOrFail(store, "cut");
      return mine.Acquire(absl::Seconds(30)).ok() && mine.Release().ok() ? 0 : 3;
    }));
  }
  usleep(300 * 1000);  // into the queue
  const std::string path = dir + "/" + ipclock::FlockFileName("cut");
  assert_int_equal(truncate(path.c_str(), 0), 0);
  usleep(300 * 1000);  // past a slice: the sleepers have looked again
  ASSERT_OK(holder.Release());
  for (pid_t pid : waiters) assert_int_equal(WaitChild(pid), 0);
  // Queued again, in order, on the file as it is now.
  assert_true(TryOrFail(holder));
  Signal started;
  pid_t next = ForkChild([&] {
    Lock mine = LockOrFail(store, "cut");
    started.Notify();
    return mine.Acquire(absl::Seconds(30)).ok() ? 0 : 3;
  });
  assert_int_equal(started.Wait(), 'x');
  usleep(200 * 1000);
  struct stat st;
  assert_int_equal(stat(path.c_str(), &st), 0);
  assert_true(st.st_size >= 1024);  // grown again to hold the queue
  ASSERT_OK(holder.Release());
  assert_int_equal(WaitChild(next), 0);
}

void DefaultDir(void**) {
  std::string d = ipclock::DefaultFlockDir();
  if (geteuid() == 0) {
    assert_string_equal(d.c_str(), "/run/lock/ipclock");
  } else {
    assert_true(d.find("/ipclock") != std::string::npos);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(SymfonyFileNames),
      cmocka_unit_test(LockFileAtSymfonyPath),
      cmocka_unit_test(HolderRecordAndFence),
      cmocka_unit_test(UnsafeDirsRefused),
      cmocka_unit_test(MissingDirIsCreatedPrivate),
      cmocka_unit_test(HostileLockFilesRefused),
      cmocka_unit_test(UnlinkedWhileWaitingIsReopened),
      cmocka_unit_test(HeldLockOnUnlinkedFileIsReportedLost),
      cmocka_unit_test(VanishedDirIsRecreated),
      cmocka_unit_test(ExactPathMode),
      cmocka_unit_test(ErrorsNameStoreResourceAndErrno),
      cmocka_unit_test(ExactPathRefusesOtherFileTypes),
      cmocka_unit_test(TwoLocksNeverShareAFile),
      cmocka_unit_test(IdleFilesAreReusedAndBounded),
      cmocka_unit_test(IdleFilesGiveWayWhenDescriptorsRunOut),
      cmocka_unit_test(ForkedChildOpensItsOwnFile),
      cmocka_unit_test(ChildReleaseLeavesParentsLock),
      cmocka_unit_test(FairNeedsAWritableSharedLockFile),
      cmocka_unit_test(FairQueueSurvivesTruncation),
      cmocka_unit_test(DefaultDir),
  };
  return cmocka_run_group_tests_name("flock_store", tests, nullptr, nullptr);
}
