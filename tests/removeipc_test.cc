// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The systemd RemoveIPC checks, against fake roots built in temp dirs, and
// the policy that StoreFromDsn applies. The suite runs as root in CI, where
// nothing of root's is ever at risk, so the checks are asked about other
// uids directly and the store tests use dirs whose risk does not depend on
// who runs them (another user's runtime dir).

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/dsn.h"
#include "core/removeipc_guard.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/stores/posix_semaphore_store.h"
#include "ipclock/stores/semaphore_store.h"
#include "ipclock/stores/shm_store.h"
#include "ipclock/store_factory.h"
#include "platform/removeipc.h"
#include "stores/flock/flock_store.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::CheckRemoveIpc;
using ipclock::IpcKind;
using ipclock::ReadRemoveIpcSetting;
using ipclock::ReadSysUidMax;
using ipclock::RemoveIpcPolicy;
using ipclock::RemoveIpcReport;
using ipclock::RemoveIpcSetting;
using ipclock_test::CaptureStderr;

// A uid far from any real account, so that its runtime dir never exists.
constexpr uid_t kOtherUid = 48213;

void MkdirP(const std::string& path) {
  std::string sofar;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    absl::StrAppend(&sofar, "/", part);
    if (mkdir(sofar.c_str(), 0755) != 0 && errno != EEXIST) {
      fail_msg("mkdir %s: %s", sofar.c_str(), strerror(errno));
    }
  }
}

// Writes `text` to <root>/<rel>, making the dirs on the way.
void Put(const std::string& root, absl::string_view rel, absl::string_view text) {
  std::string path = absl::StrCat(root, "/", rel);
  MkdirP(path.substr(0, path.rfind('/')));
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_msg("open %s: %s", path.c_str(), strerror(errno));
  if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    fail_msg("write %s", path.c_str());
  }
  close(fd);
}

bool Contains(absl::string_view haystack, absl::string_view needle) {
  return haystack.find(needle) != absl::string_view::npos;
}

void AssertSource(const RemoveIpcSetting& s, absl::string_view suffix) {
  if (!absl::EndsWith(s.source, suffix)) {
    fail_msg("source is \"%s\", expected it to end in \"%s\"", s.source.c_str(),
             std::string(suffix).c_str());
  }
}

// ReadRemoveIpcSetting(root) reads `remove_ipc`, from a source ending in
// `source`.
void ExpectSetting(const std::string& root, bool remove_ipc, absl::string_view source) {
  RemoveIpcSetting s = ReadRemoveIpcSetting(root);
  if (s.remove_ipc != remove_ipc) {
    fail_msg("RemoveIPC read as %s from %s", s.remove_ipc ? "yes" : "no", s.source.c_str());
  }
  AssertSource(s, source);
}

void BooleanSyntax(void**) {
  for (const char* yes : {"1", "yes", "YES", "y", "Y", "true", "True", "t", "on", "ON"}) {
    std::optional<bool> b = ipclock::ParseSystemdBoolean(yes);
    if (!b || !*b) fail_msg("%s should read as true", yes);
  }
  for (const char* no : {"0", "no", "No", "n", "false", "FALSE", "f", "off", "Off"}) {
    std::optional<bool> b = ipclock::ParseSystemdBoolean(no);
    if (!b || *b) fail_msg("%s should read as false", no);
  }
  for (const char* bad : {"", "2", "yess", "enable", "nope", " yes"}) {
    if (ipclock::ParseSystemdBoolean(bad)) fail_msg("'%s' should be invalid", bad);
  }
}

void NoConfigMeansYes(void**) {
  std::string root = ipclock_test::MakeTempDir();
  RemoveIpcSetting s = ReadRemoveIpcSetting(root);
  assert_true(s.remove_ipc);
  assert_string_equal(s.source.c_str(), "systemd default");
}

void ExplicitYesAndNo(void**) {
  std::string root = ipclock_test::MakeTempDir();
  Put(root, "etc/systemd/logind.conf", "[Login]\nRemoveIPC=no\n");
  ExpectSetting(root, false, "/etc/systemd/logind.conf:2");

  Put(root, "etc/systemd/logind.conf", "[Login]\n  RemoveIPC = yes  \n");
  ExpectSetting(root, true, "/etc/systemd/logind.conf:2");

  // The last assignment wins; an invalid one is skipped, as logind skips it.
  Put(root, "etc/systemd/logind.conf",
      "[Login]\nRemoveIPC=off\nRemoveIPC=perhaps\nRemoveIPC=\n");
  ExpectSetting(root, false, "logind.conf:2");
}

void CommentsAreIgnored(void**) {
  std::string root = ipclock_test::MakeTempDir();
  Put(root, "etc/systemd/logind.conf",
      "# vendor defaults\n[Login]\n#RemoveIPC=no\n  ;RemoveIPC=no\n");
  RemoveIpcSetting s = ReadRemoveIpcSetting(root);
  assert_true(s.remove_ipc);
  assert_string_equal(s.source.c_str(), "systemd default");
}

void OtherSectionsAndKeysAreIgnored(void**) {
  std::string root = ipclock_test::MakeTempDir();
  Put(root, "etc/systemd/logind.conf",
      "RemoveIPC=no\n"                 // before any section
      "[Login]\nremoveipc=no\n"        // keys are case-sensitive
      "RemoveIPCX=no\n"
      "[login]\nRemoveIPC=no\n"        // so are section names
      "[Sleep]\nRemoveIPC=no\n");
  assert_true(ReadRemoveIpcSetting(root).remove_ipc);

  Put(root, "etc/systemd/logind.conf",
      "[Sleep]\nRemoveIPC=yes\n[Login]\nKillUserProcesses=no\nRemoveIPC=no\n"
      "[Other]\nRemoveIPC=yes\n");
  ExpectSetting(root, false, "logind.conf:5");
}

void ContinuationLines(void**) {
  std::string root = ipclock_test::MakeTempDir();
  Put(root, "etc/systemd/logind.conf", "[Login]\nRemoveIPC=\\\nno\n");
  // "RemoveIPC= no" once joined: the value is "no".
  ExpectSetting(root, false, "logind.conf:2");
}

void MainFileSearchOrder(void**) {
  std::string root = ipclock_test::MakeTempDir();
  // Newer systemd ships the main file in /usr/lib; it counts when /etc has
  // none.
  Put(root, "usr/lib/systemd/logind.conf", "[Login]\nRemoveIPC=no\n");
  assert_false(ReadRemoveIpcSetting(root).remove_ipc);
  // Only the first main file found is read.
  Put(root, "etc/systemd/logind.conf", "[Login]\n#RemoveIPC=yes\n");
  assert_true(ReadRemoveIpcSetting(root).remove_ipc);
}

void DropInsOverrideTheMainFile(void**) {
  std::string root = ipclock_test::MakeTempDir();
  Put(root, "etc/systemd/logind.conf", "[Login]\nRemoveIPC=yes\n");
  Put(root, "etc/systemd/logind.conf.d/ipclock.conf", "[Login]\nRemoveIPC=no\n");
  ExpectSetting(root, false, "/etc/systemd/logind.conf.d/ipclock.conf:2");

  // Only *.conf files, and no hidden ones.
  Put(root, "etc/systemd/logind.conf.d/zz.conf.bak", "[Login]\nRemoveIPC=yes\n");
  Put(root, "etc/systemd/logind.conf.d/.zz.conf", "[Login]\nRemoveIPC=yes\n");
  assert_false(ReadRemoveIpcSetting(root).remove_ipc);
}

void DropInsSortByNameAcrossDirs(void**) {
  std::string root = ipclock_test::MakeTempDir();
  Put(root, "etc/systemd/logind.conf.d/10-admin.conf", "[Login]\nRemoveIPC=no\n");
  Put(root, "usr/lib/systemd/logind.conf.d/50-vendor.conf",
      "[Login]\nRemoveIPC=yes\n");
  // 50-vendor sorts after 10-admin, so it wins although /usr/lib ranks below
  // /etc.
  ExpectSetting(root, true, "/usr/lib/systemd/logind.conf.d/50-vendor.conf:2");

  // An empty file of the same name in a higher dir masks the vendor's.
  Put(root, "run/systemd/logind.conf.d/50-vendor.conf", "");
  ExpectSetting(root, false, "10-admin.conf:2");

  // As does a link to /dev/null.
  Put(root, "run/systemd/logind.conf.d/50-vendor.conf", "[Login]\nRemoveIPC=yes\n");
  assert_true(ReadRemoveIpcSetting(root).remove_ipc);
  std::string link = absl::StrCat(root, "/etc/systemd/logind.conf.d/50-vendor.conf");
  assert_int_equal(symlink("/dev/null", link.c_str()), 0);
  assert_false(ReadRemoveIpcSetting(root).remove_ipc);

  // /usr/local/lib and the unmerged /lib are read too, in name order.
  Put(root, "usr/local/lib/systemd/logind.conf.d/70-local.conf",
      "[Login]\nRemoveIPC=yes\n");
  assert_true(ReadRemoveIpcSetting(root).remove_ipc);
  Put(root, "lib/systemd/logind.conf.d/80-lib.conf", "[Login]\nRemoveIPC=no\n");
  ExpectSetting(root, false, "/lib/systemd/logind.conf.d/80-lib.conf:2");
}

void SysUidMax(void**) {
  std::string root = ipclock_test::MakeTempDir();
  std::string source;
  assert_int_equal(ReadSysUidMax(root, &source), 999);
  assert_string_equal(source.c_str(), "default");

  Put(root, "etc/login.defs",
      "# SYS_UID_MAX 100\nUID_MIN 500\nSYS_UID_MAX\t\t499\n");
  assert_int_equal(ReadSysUidMax(root, &source), 499);
  assert_true(absl::EndsWith(source, "/etc/login.defs"));

  Put(root, "etc/login.defs", "SYS_UID_MAX lots\n");
  assert_int_equal(ReadSysUidMax(root), 999);
}

void SystemUsersAndRootAreExempt(void**) {
  std::string root = ipclock_test::MakeTempDir();
  for (IpcKind kind : {IpcKind::kSysV, IpcKind::kPosixShm}) {
    RemoveIpcReport r = CheckRemoveIpc(root, 1000, kind);
    assert_true(r.remove_ipc);
    assert_false(r.is_system_user);
    assert_true(r.at_risk);
    assert_true(Contains(r.reason, "RemoveIPC=yes"));
    assert_true(Contains(r.reason, "uid 1000"));
    assert_true(Contains(r.advice, "RemoveIPC=no"));
    assert_true(Contains(r.advice, "/etc/systemd/logind.conf.d/ipclock.conf"));
    assert_true(Contains(r.advice, "uid <= 999"));

    r = CheckRemoveIpc(root, 999, kind);
    assert_true(r.is_system_user);
    assert_false(r.at_risk);
    assert_true(r.reason.empty());

    r = CheckRemoveIpc(root, 0, kind);
    assert_true(r.is_system_user);
    assert_false(r.at_risk);
  }

  // A raised boundary makes uid 1000 a system user.
  Put(root, "etc/login.defs", "SYS_UID_MAX 1500\n");
  RemoveIpcReport r = CheckRemoveIpc(root, 1000, IpcKind::kSysV);
  assert_int_equal(r.sys_uid_max, 1500);
  assert_true(r.is_system_user);
  assert_false(r.at_risk);

  // RemoveIPC=no protects everyone.
  Put(root, "etc/login.defs", "");
  Put(root, "etc/systemd/logind.conf.d/ipclock.conf", "[Login]\nRemoveIPC=no\n");
  r = CheckRemoveIpc(root, 1000, IpcKind::kPosixShm);
  assert_false(r.remove_ipc);
  assert_false(r.at_risk);
}

void LingeringUsersAreExempt(void**) {
  std::string root = ipclock_test::MakeTempDir();
  Put(root, "etc/passwd",
      "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n");
  Put(root, "var/lib/systemd/linger/alice", "");
  RemoveIpcReport r = CheckRemoveIpc(root, 1000, IpcKind::kSysV);
  assert_true(r.lingering);
  assert_false(r.at_risk);
  r = CheckRemoveIpc(root, 1000, IpcKind::kLockDir, "/run/user/1000/ipclock");
  assert_false(r.at_risk);
  // Bob has no passwd entry and no flag.
  r = CheckRemoveIpc(root, 1001, IpcKind::kSysV);
  assert_false(r.lingering);
  assert_true(r.at_risk);
}

void LockDirs(void**) {
  std::string root = ipclock_test::MakeTempDir();
  RemoveIpcReport r =
      CheckRemoveIpc(root, 1000, IpcKind::kLockDir, "/run/user/1000/ipclock");
  assert_true(r.at_risk);
  assert_true(Contains(r.reason, "runtime dir"));
  assert_true(Contains(r.advice, "/run/lock"));

  // /var/run is /run; "." and ".." are resolved before judging.
  r = CheckRemoveIpc(root, 1000, IpcKind::kLockDir, "/var/run/user/1000/./a/../b/");
  assert_string_equal(r.lock_dir.c_str(), "/run/user/1000/b");
  assert_true(r.at_risk);

  // Logout removes a runtime dir whatever RemoveIPC says and whoever uses it.
  Put(root, "etc/systemd/logind.conf.d/ipclock.conf", "[Login]\nRemoveIPC=no\n");
  r = CheckRemoveIpc(root, 0, IpcKind::kLockDir, "/run/user/1000/ipclock");
  assert_true(r.at_risk);

  // /dev/shm follows RemoveIPC and the system-user rule.
  r = CheckRemoveIpc(root, 1000, IpcKind::kLockDir, "/dev/shm/ipclock");
  assert_false(r.at_risk);
  Put(root, "etc/systemd/logind.conf.d/ipclock.conf", "[Login]\nRemoveIPC=yes\n");
  r = CheckRemoveIpc(root, 1000, IpcKind::kLockDir, "/dev/shm/ipclock");
  assert_true(r.at_risk);
  assert_true(Contains(r.reason, "/dev/shm"));
  r = CheckRemoveIpc(root, 0, IpcKind::kLockDir, "/dev/shm/ipclock");
  assert_false(r.at_risk);

  // /tmp: a weaker warning, for everyone.
  r = CheckRemoveIpc(root, 0, IpcKind::kLockDir, "/tmp/ipclock-0");
  assert_false(r.at_risk);
  assert_true(r.may_be_cleaned);
  assert_true(Contains(r.reason, "systemd-tmpfiles"));
  assert_true(Contains(r.advice, "x /tmp/ipclock-0"));

  // Dirs that outlive sessions, and names that only look alike.
  for (const char* safe : {"/run/lock/ipclock", "/var/lock/app", "/run/userdata/1000",
                           "/run/user", "/dev/shmem/x", "/tmpfoo/x"}) {
    r = CheckRemoveIpc(root, 1000, IpcKind::kLockDir, safe);
    if (r.at_risk || r.may_be_cleaned) fail_msg("%s flagged: %s", safe, r.reason.c_str());
  }
}

size_t Lines(absl::string_view text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

void WarnPolicyPrintsOncePerKind(void**) {
  std::string root = ipclock_test::MakeTempDir();
  RemoveIpcReport sysv = CheckRemoveIpc(root, 1000, IpcKind::kSysV);
  RemoveIpcReport shm = CheckRemoveIpc(root, 1000, IpcKind::kPosixShm);
  RemoveIpcReport safe = CheckRemoveIpc(root, 0, IpcKind::kSysV);
  ipclock::ResetRemoveIpcWarningsForTesting();
  std::string out = CaptureStderr([&] {
    // CMocka's assertions must not run on other threads: count failures.
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&] {
        if (!ipclock::ApplyRemoveIpcPolicy(RemoveIpcPolicy::kWarn, sysv, "semaphore").ok()) {
          ++failures;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    assert_int_equal(failures.load(), 0);
    ASSERT_OK(ipclock::ApplyRemoveIpcPolicy(RemoveIpcPolicy::kWarn, shm, "shm://x"));
    ASSERT_OK(ipclock::ApplyRemoveIpcPolicy(RemoveIpcPolicy::kWarn, shm, "shm://y"));
    ASSERT_OK(ipclock::ApplyRemoveIpcPolicy(RemoveIpcPolicy::kWarn, safe, "semaphore"));
  });
  assert_int_equal(Lines(out), 2);
  assert_true(Contains(out, "ipclock: warning: semaphore: systemd-logind removes SysV IPC"));
  assert_true(Contains(out, "shm://x"));
  assert_false(Contains(out, "shm://y"));

  ipclock::ResetRemoveIpcWarningsForTesting();
  out = CaptureStderr([&] {
    ASSERT_OK(ipclock::ApplyRemoveIpcPolicy(RemoveIpcPolicy::kIgnore, sysv, "semaphore"));
  });
  assert_true(out.empty());
}

void RefusePolicyFailsOnlyRealRisks(void**) {
  std::string root = ipclock_test::MakeTempDir();
  RemoveIpcReport sysv = CheckRemoveIpc(root, 1000, IpcKind::kSysV);
  absl::Status s =
      ipclock::ApplyRemoveIpcPolicy(RemoveIpcPolicy::kRefuse, sysv, "semaphore");
  ASSERT_CODE(s, absl::StatusCode::kFailedPrecondition);
  assert_true(Contains(s.message(), "semaphore"));
  assert_true(Contains(s.message(), sysv.reason));
  assert_true(Contains(s.message(), sysv.advice));

  ASSERT_OK(ipclock::ApplyRemoveIpcPolicy(
      RemoveIpcPolicy::kRefuse, CheckRemoveIpc(root, 0, IpcKind::kSysV), "semaphore"));
  // A tmp cleaner is a matter of age, not certainty: refuse only warns.
  ipclock::ResetRemoveIpcWarningsForTesting();
  std::string out = CaptureStderr([&] {
    ASSERT_OK(ipclock::ApplyRemoveIpcPolicy(
        RemoveIpcPolicy::kRefuse,
        CheckRemoveIpc(root, 0, IpcKind::kLockDir, "/tmp/x"), "flock:///tmp/x"));
  });
  assert_int_equal(Lines(out), 1);
}

// Points the checks at `root` for the rest of the process.
void UseRoot(const std::string& root) {
  assert_int_equal(setenv("IPCLOCK_REMOVEIPC_ROOT", root.c_str(), 1), 0);
  assert_string_equal(ipclock::RemoveIpcRoot().c_str(), root.c_str());
}

void StoreFromDsnRefusesARuntimeDir(void**) {
  std::string root = ipclock_test::MakeTempDir();
  UseRoot(root);
  const std::string dir = absl::StrCat("/run/user/", kOtherUid, "/ipclock-test");
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store =
      ipclock::StoreFromDsn(absl::StrCat("flock://", dir, "?removeipc=refuse"));
  ASSERT_CODE(store, absl::StatusCode::kFailedPrecondition);
  assert_true(Contains(store.status().message(), "runtime dir"));
  assert_true(Contains(store.status().message(), dir));
  // Refused before the store made its dir.
  struct stat st;
  assert_int_not_equal(stat(dir.c_str(), &st), 0);

  // The StoreOptions policy applies where the DSN names none...
  ipclock::StoreOptions refuse;
  refuse.remove_ipc = RemoveIpcPolicy::kRefuse;
  store = ipclock::StoreFromDsn(absl::StrCat("flock://", dir), refuse);
  ASSERT_CODE(store, absl::StatusCode::kFailedPrecondition);
  // ...and the DSN's overrides it, both ways.
  ipclock::StoreOptions ignore;
  ignore.remove_ipc = RemoveIpcPolicy::kIgnore;
  store = ipclock::StoreFromDsn(absl::StrCat("flock://", dir, "?removeipc=refuse"),
                                ignore);
  ASSERT_CODE(store, absl::StatusCode::kFailedPrecondition);
  // (Read without building the store, which would make the dir.)
  absl::StatusOr<ipclock::Dsn> dsn =
      ipclock::Dsn::Parse(absl::StrCat("flock://", dir, "?removeipc=ignore"));
  ASSERT_OK(dsn);
  absl::StatusOr<RemoveIpcPolicy> policy =
      ipclock::TakeRemoveIpcPolicy(*dsn, RemoveIpcPolicy::kRefuse);
  ASSERT_OK(policy);
  assert_true(*policy == RemoveIpcPolicy::kIgnore);
  ASSERT_OK(dsn->CheckAllOptionsUsed());  // the store's parser will not see it
  // The typed factory applies the same policy as the DSN.
  ipclock::FlockStoreOptions typed;
  typed.dir = dir;
  typed.remove_ipc = RemoveIpcPolicy::kRefuse;
  ASSERT_CODE(ipclock::NewFlockStore(typed), absl::StatusCode::kFailedPrecondition);

  // Lingering for that uid makes the dir safe.
  Put(root, "etc/passwd", absl::StrCat("carol:x:", kOtherUid, ":100::/:/bin/sh\n"));
  Put(root, "var/lib/systemd/linger/carol", "");
  // (Checked without building a store, which would make the dir.)
  ASSERT_OK(ipclock::GuardRemoveIpc(ipclock::kFlockEntry, dir, RemoveIpcPolicy::kRefuse,
                                    absl::StrCat("flock://", dir)));
}

void StoreFromDsnOptionValues(void**) {
  std::string root = ipclock_test::MakeTempDir();
  UseRoot(root);
  std::string dir = ipclock_test::MakeTempDir();
  ASSERT_CODE(ipclock::StoreFromDsn(absl::StrCat("flock://", dir, "?removeipc=sometimes")),
              absl::StatusCode::kInvalidArgument);
  // Only the stores whose locks logind may delete take the option; for the
  // others it is unknown, as any misspelt option is.
  ASSERT_CODE(ipclock::StoreFromDsn("in-memory:?removeipc=refuse"),
              absl::StatusCode::kInvalidArgument);
  ASSERT_OK(ipclock::StoreFromDsn(absl::StrCat("flock://", dir, "?removeipc=REFUSE")));
  // Exact-path naming without a dir has no dir to judge.
  ASSERT_OK(ipclock::StoreFromDsn("flock:?naming=path&removeipc=refuse"));
}

// The kernel-object stores: refused exactly when this process's uid is a
// non-system user, which a fake login.defs arranges unless we are root.
// What building a store finds goes to StoreOptions::diagnostics, and the
// process default hears nothing of it; without a sink, to the default.
void StoreSinkGetsWhatTheBuildFound(void**) {
  std::string root = ipclock_test::MakeTempDir();
  UseRoot(root);
  const std::string dir = ipclock_test::MakeTempDir();  // under /tmp: cleaned by age
  static std::vector<ipclock::Diagnostic> got;
  got.clear();
  ipclock::StoreOptions options;
  options.diagnostics = [](const ipclock::Diagnostic& d) { got.push_back(d); };
  ipclock::ResetRemoveIpcWarningsForTesting();
  std::string out = CaptureStderr(
      [&] { ASSERT_OK(ipclock::StoreFromDsn(absl::StrCat("flock://", dir), options)); });
  assert_true(out.empty());
  assert_int_equal(got.size(), 1);
  assert_true(got[0].kind == ipclock::DiagnosticKind::kNotice);
  assert_true(Contains(got[0].text, absl::StrCat("ipclock: warning: flock://", dir)));

  ipclock::ResetRemoveIpcWarningsForTesting();
  out = CaptureStderr([&] { ASSERT_OK(ipclock::StoreFromDsn(absl::StrCat("flock://", dir))); });
  assert_int_equal(Lines(out), 1);
  assert_int_equal(got.size(), 1);
}

void IpcSchemesFollowTheUid(void**) {
  std::string root = ipclock_test::MakeTempDir();
  UseRoot(root);
  Put(root, "etc/login.defs", "SYS_UID_MAX 0\n");
  const bool expect_refusal = geteuid() != 0;
  const std::string shm_name = absl::StrCat("removeipc-test-", getpid());
  for (const std::string& text :
       {std::string("semaphore:?removeipc=refuse"),
        std::string("posix-semaphore:?removeipc=refuse"),
        absl::StrCat("shm://", shm_name, "?removeipc=refuse")}) {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(text);
    if (expect_refusal) {
      ASSERT_CODE(store, absl::StatusCode::kFailedPrecondition);
    } else {
      ASSERT_OK(store);
    }
  }
  // The typed factories apply the policy too.
  ipclock::ShmStoreOptions shm;
  shm.name = shm_name;
  shm.remove_ipc = RemoveIpcPolicy::kRefuse;
  ipclock::SemaphoreStoreOptions sem;
  sem.remove_ipc = RemoveIpcPolicy::kRefuse;
  ipclock::PosixSemaphoreStoreOptions posix;
  posix.remove_ipc = RemoveIpcPolicy::kRefuse;
  for (absl::Status s : {ipclock::NewShmStore(shm).status(),
                         ipclock::NewSemaphoreStore(sem).status(),
                         ipclock::NewPosixSemaphoreStore(posix).status()}) {
    if (expect_refusal) {
      ASSERT_CODE(s, absl::StatusCode::kFailedPrecondition);
    } else {
      ASSERT_OK(s);
    }
  }
  ipclock::RemoveShmSegment(shm_name).IgnoreError();
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(BooleanSyntax),
      cmocka_unit_test(NoConfigMeansYes),
      cmocka_unit_test(ExplicitYesAndNo),
      cmocka_unit_test(CommentsAreIgnored),
      cmocka_unit_test(OtherSectionsAndKeysAreIgnored),
      cmocka_unit_test(ContinuationLines),
      cmocka_unit_test(MainFileSearchOrder),
      cmocka_unit_test(DropInsOverrideTheMainFile),
      cmocka_unit_test(DropInsSortByNameAcrossDirs),
      cmocka_unit_test(SysUidMax),
      cmocka_unit_test(SystemUsersAndRootAreExempt),
      cmocka_unit_test(LingeringUsersAreExempt),
      cmocka_unit_test(LockDirs),
      cmocka_unit_test(WarnPolicyPrintsOncePerKind),
      cmocka_unit_test(RefusePolicyFailsOnlyRealRisks),
      cmocka_unit_test(StoreFromDsnRefusesARuntimeDir),
      cmocka_unit_test(StoreFromDsnOptionValues),
      cmocka_unit_test(StoreSinkGetsWhatTheBuildFound),
      cmocka_unit_test(IpcSchemesFollowTheUid),
  };
  return cmocka_run_group_tests_name("removeipc", tests, nullptr, nullptr);
}
