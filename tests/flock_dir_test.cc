// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Lock dirs safe along their whole path. Another user (nobody, played by a
// forked child that drops to it) who owns or may write a dir above a lock
// dir can rename the lock dir away and put their own in its place: each such
// case is shown to be a real attack, and the store must refuse the dir,
// naming the ancestor and its owner. A sticky dir such as /tmp is accepted
// above a dir of ours, because there the attack fails. The same check is
// what `ipclock doctor` calls (CheckLockDirAncestors), also on image trees.

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ipclock/stores/flock_store.h"
#include "platform/lock_dir.h"
#include "flock_test_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using namespace ipclock_test;

absl::Status OpenIn(const std::string& dir) {
  ipclock::FlockStoreOptions options;
  options.dir = dir;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  return ipclock::NewFlockStore(options).status();
}

void ExpectRefused(const absl::Status& s, const std::string& ancestor, const char* why) {
  if (!absl::IsPermissionDenied(s) ||
      !absl::StrContains(s.message(), absl::StrCat("its ancestor ", ancestor, " (")) ||
      !absl::StrContains(s.message(), why)) {
    fail_msg("expected PermissionDenied naming %s and \"%s\": %s", ancestor.c_str(), why,
             s.ToString().c_str());
  }
}

// A dir above which nobody may pass through: 0755 all the way.
std::string Reachable() {
  const std::string top = MakeTempDir();
  assert_int_equal(chmod(top.c_str(), 0755), 0);
  return top;
}

// nobody renames `dir` away and makes their own in its place: 0 if it
// worked.
int Swap(const std::string& dir) {
  return AsNobody([&] {
    if (rename(dir.c_str(), (dir + ".away").c_str()) != 0) return 10 + errno % 10;
    return mkdir(dir.c_str(), 0777) == 0 ? 0 : 2;
  });
}

void AncestorOwnedByAnotherUser(void**) {
  SKIP_UNLESS_ROOT();
  const std::string mid = Reachable() + "/theirs";
  assert_int_equal(mkdir(mid.c_str(), 0755), 0);
  assert_int_equal(chown(mid.c_str(), kNobodyUid, kNobodyUid), 0);
  const std::string dir = mid + "/locks";
  ExpectRefused(OpenIn(dir), mid, "(owner uid 65534, mode 0755) is owned by another user");
  struct stat st;
  assert_int_not_equal(stat(dir.c_str(), &st), 0);  // nothing made under it
  // Made by root in their dir all the same: they can still swap it.
  assert_int_equal(mkdir(dir.c_str(), 0700), 0);
  ExpectRefused(OpenIn(dir), mid, "owned by another user");
  assert_int_equal(Swap(dir), 0);
}

void AncestorWritableByOthers(void**) {
  SKIP_UNLESS_ROOT();
  const std::string mid = Reachable() + "/shared";
  assert_int_equal(mkdir(mid.c_str(), 0775), 0);
  assert_int_equal(chown(mid.c_str(), 0, kNobodyUid), 0);  // nobody's group
  assert_int_equal(chmod(mid.c_str(), 0775), 0);
  const std::string dir = mid + "/locks";
  assert_int_equal(mkdir(dir.c_str(), 0700), 0);
  ExpectRefused(OpenIn(dir), mid, "(owner uid 0, mode 0775) is writable by its group");
  assert_int_equal(Swap(dir), 0);  // the group can

  assert_int_equal(chmod(mid.c_str(), 0777), 0);
  ExpectRefused(OpenIn(dir), mid, "is writable by all users without the sticky bit");
  assert_int_equal(system(absl::StrCat("rm -rf '", dir, "'").c_str()), 0);
  assert_int_equal(mkdir(dir.c_str(), 0700), 0);
  assert_int_equal(Swap(dir), 0);  // and so can everyone
}

// Sticky (as /tmp): others may add entries but not move ours.
void StickyAncestorAboveOurDir(void**) {
  SKIP_UNLESS_ROOT();
  const std::string mid = Reachable() + "/sticky";
  assert_int_equal(mkdir(mid.c_str(), 01777), 0);
  assert_int_equal(chmod(mid.c_str(), 01777), 0);
  const std::string dir = mid + "/locks";
  ASSERT_OK(OpenIn(dir));
  assert_int_equal(Swap(dir), 10 + EPERM % 10);  // the sticky bit stops them

  // But an entry of theirs on the way (a link they planted, which they may
  // replace at will) makes the path theirs.
  const std::string real = Reachable() + "/real";
  assert_int_equal(mkdir(real.c_str(), 0755), 0);
  const std::string link = mid + "/link";
  assert_int_equal(AsNobody([&] { return symlink(real.c_str(), link.c_str()) == 0 ? 0 : 1; }),
                   0);
  ExpectRefused(OpenIn(link + "/locks"), mid,
                "is sticky and writable by others, and the entry in it is owned by uid 65534");
}

// Links on the way are followed, and the dirs they lead through checked.
void SymlinkedAncestors(void**) {
  SKIP_UNLESS_ROOT();
  const std::string top = Reachable();
  const std::string real = top + "/real";
  assert_int_equal(mkdir(real.c_str(), 0755), 0);
  assert_int_equal(symlink("real", (top + "/link").c_str()), 0);
  ASSERT_OK(OpenIn(top + "/link/locks"));
  struct stat st;
  assert_int_equal(stat((real + "/locks").c_str(), &st), 0);

  const std::string theirs = top + "/theirs";
  assert_int_equal(mkdir(theirs.c_str(), 0755), 0);
  assert_int_equal(chown(theirs.c_str(), kNobodyUid, kNobodyUid), 0);
  assert_int_equal(mkdir((theirs + "/inner").c_str(), 0755), 0);
  assert_int_equal(symlink((theirs + "/inner").c_str(), (top + "/via").c_str()), 0);
  ExpectRefused(OpenIn(top + "/via/locks"), theirs, "owned by another user");
}

// The doctor's view: a tree that is not the running system, whose absolute
// links stay inside it, and paths named as seen inside it.
void AncestorsOfAnImageTree(void**) {
  SKIP_UNLESS_ROOT();
  const std::string tree = Reachable();
  for (const char* d : {"/run", "/run/lock", "/var"}) {
    assert_int_equal(mkdir((tree + d).c_str(), 0755), 0);
  }
  assert_int_equal(chmod((tree + "/run/lock").c_str(), 01777), 0);
  assert_int_equal(symlink("/run/lock", (tree + "/var/lock").c_str()), 0);
  ASSERT_OK(ipclock::CheckLockDirAncestors("/var/lock/app/locks", 0, "doctor", tree));
  ASSERT_OK(ipclock::CheckLockDirAncestors("/var/lock/app", 1000, "doctor", tree));
  // The host's own /run is not what is checked: the tree's is.
  assert_int_equal(chown((tree + "/run").c_str(), kNobodyUid, kNobodyUid), 0);
  absl::Status s = ipclock::CheckLockDirAncestors("/var/lock/app", 0, "doctor", tree);
  ExpectRefused(s, "/run", "(owner uid 65534, mode 0755) is owned by another user");
  assert_false(absl::StrContains(s.message(), tree));
  // For the user who owns it, it is fine.
  ASSERT_OK(ipclock::CheckLockDirAncestors("/var/lock/app", kNobodyUid, "doctor", tree));
  ASSERT_CODE(ipclock::CheckLockDirAncestors("var/lock", 0, "doctor", tree),
              absl::StatusCode::kInvalidArgument);
}

// For any user: the host's usual dirs pass, missing parts pass (the first
// lock makes them), and a relative path is refused.
void UsualDirsPass(void**) {
  const uid_t me = geteuid();
  ASSERT_OK(ipclock::CheckLockDirAncestors("/tmp/ipclock-none-such/a/b", me, "doctor"));
  ASSERT_OK(ipclock::CheckLockDirAncestors("/dev/shm/x", me, "doctor"));
  ASSERT_OK(ipclock::CheckLockDirAncestors(ipclock::DefaultFlockDir(), me, "doctor"));
  ASSERT_CODE(ipclock::CheckLockDirAncestors("relative/dir", me, "doctor"),
              absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::CheckLockDirAncestors("/tmp/..", me, "doctor"),
              absl::StatusCode::kInvalidArgument);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(AncestorOwnedByAnotherUser),
      cmocka_unit_test(AncestorWritableByOthers),
      cmocka_unit_test(StickyAncestorAboveOurDir),
      cmocka_unit_test(SymlinkedAncestors),
      cmocka_unit_test(AncestorsOfAnImageTree),
      cmocka_unit_test(UsualDirsPass),
  };
  return cmocka_run_group_tests_name("flock_dir", tests, nullptr, nullptr);
}
