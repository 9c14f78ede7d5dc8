// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The checks of what deletes locks: systemd-logind's RemoveIPC, and lock
// dirs that vanish, are cleaned, are unsafe, or sit on a network
// filesystem.

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "doctor_checks.h"
#include "ipclock/flock_store.h"
#include "platform/lock_dir.h"

namespace ipclock_cli {

namespace {

using Level = Finding::Level;

// Filesystems where flock(2) is emulated, lost on failover, or up to a
// userspace daemon (statfs f_type values from linux/magic.h).
struct RemoteFs {
  long magic;
  const char* name;
};
constexpr RemoteFs kRemoteFilesystems[] = {
    {0x6969, "NFS"},           {0x517b, "SMB"},    {static_cast<long>(0xff534d42), "CIFS"},
    {static_cast<long>(0xfe534d42), "SMB2"}, {0x65735546, "FUSE"},
    {0x01021997, "9p"},        {0x00c36400, "Ceph"}, {0x5346414f, "AFS"},
};

std::string InTree(const DoctorTarget& target, absl::string_view path) {
  absl::string_view root = target.root;
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  return absl::StrCat(root, path);
}

// A path below the root dir as the target system sees it.
std::string OutOfTree(const DoctorTarget& target, absl::string_view path) {
  const std::string root = InTree(target, "");
  if (!root.empty() && absl::ConsumePrefix(&path, root) && path.empty()) return "/";
  return std::string(path);
}

// `path`, or its nearest ancestor that exists.
std::string NearestExisting(std::string path) {
  struct stat st;
  while (lstat(path.c_str(), &st) != 0 && errno == ENOENT) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos || path.size() <= 1) break;
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
  return path;
}

std::string StatusText(const absl::Status& s) {
  absl::string_view m = s.message();
  absl::ConsumePrefix(&m, "ipclock: ");
  return std::string(m);
}

// A risk, or information only for a lock dir that is one of several
// candidates.
Level RiskFor(const DoctorTarget::LockDir& d) {
  return d.when.empty() ? Level::kRisk : Level::kInfo;
}

std::string Qualified(const DoctorTarget::LockDir& d, absl::string_view message) {
  if (d.when.empty()) return std::string(message);
  return absl::StrCat("when ", d.when, ": ", message);
}

void CheckLifetime(const DoctorTarget& target, const DoctorTarget::LockDir& d,
                   std::vector<Finding>* out) {
  const ipclock::RemoveIpcReport r =
      ipclock::CheckRemoveIpc(target.root, target.uid, ipclock::IpcKind::kLockDir, d.dir);
  Finding f;
  f.check = "lock-dir-lifetime";
  f.subject = d.dir;
  if (r.at_risk || r.may_be_cleaned) {
    f.level = RiskFor(d);
    f.message = Qualified(d, r.reason);
    f.advice = r.advice;
  } else {
    f.message = Qualified(
        d, r.lingering ? "the dir is in a runtime dir, but its user lingers"
                       : "not removed at logout and not under a tmp dir");
  }
  out->push_back(std::move(f));
}

void CheckPermissions(const DoctorTarget& target, const DoctorTarget::LockDir& d,
                      std::vector<Finding>* out) {
  const std::string path = InTree(target, d.dir);
  Finding f;
  f.check = "lock-dir-permissions";
  f.subject = d.dir;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    f.message = Qualified(
        d, absl::StrCat("does not exist yet (", strerror(errno),
                        "); the first lock creates it with mode 0700 in ",
                        OutOfTree(target, NearestExisting(path))));
  } else if (S_ISLNK(st.st_mode)) {
    f.level = RiskFor(d);
    f.message = Qualified(d, "is a symbolic link, which the flock store refuses: "
                             "whoever controls the link controls the locks");
    f.advice = "point --store at the real dir";
  } else if (absl::Status s = ipclock::CheckLockDirSafetyFor(
                 st, d.dir, absl::StrCat("flock://", d.dir), target.uid);
             !s.ok()) {
    f.level = RiskFor(d);
    f.message = Qualified(d, StatusText(s));
    f.advice = absl::StrCat(
        "make the dir owned by uid ", target.uid,
        " or root and not writable by others: chown ", target.uid, " ", d.dir,
        "; chmod 0700 ", d.dir, " (or 1777 for a dir shared by several users)");
  } else {
    f.message = Qualified(d, absl::StrFormat("mode %04o, owner uid %d: safe",
                                             st.st_mode & 07777, st.st_uid));
  }
  out->push_back(std::move(f));
}

void CheckFilesystem(const DoctorTarget& target, const DoctorTarget::LockDir& d,
                     std::vector<Finding>* out) {
  const std::string existing = NearestExisting(InTree(target, d.dir));
  struct statfs fs;
  if (statfs(existing.c_str(), &fs) != 0) return;
  Finding f;
  f.check = "lock-dir-filesystem";
  f.subject = d.dir;
  for (const RemoteFs& r : kRemoteFilesystems) {
    if (static_cast<long>(fs.f_type) != r.magic) continue;
    // A tree mounted here says little about the filesystem the target
    // system will have.
    f.level = target.host() ? RiskFor(d) : Level::kInfo;
    f.message = Qualified(
        d, absl::StrCat(OutOfTree(target, existing), " is on ", r.name,
                        ": flock(2) there is emulated with byte-range locks or "
                        "not shared between hosts, and a server or daemon "
                        "restart can drop held locks"));
    f.advice = "keep lock dirs on a local filesystem, such as /run/lock/APP";
    out->push_back(std::move(f));
    return;
  }
  f.message = Qualified(d, absl::StrCat("on a local filesystem (f_type 0x",
                                        absl::Hex(fs.f_type), ")"));
  out->push_back(std::move(f));
}

}  // namespace

bool DoctorTarget::host() const {
  absl::string_view r = root;
  while (!r.empty() && r.back() == '/') r.remove_suffix(1);
  return r.empty();
}

void SetDefaultFlockDirs(DoctorTarget* target) {
  target->lock_dirs.clear();
  if (target->uid == 0) {
    target->lock_dirs.push_back({"/run/lock/ipclock", ""});
  } else if (target->is_current_user) {
    target->lock_dirs.push_back({ipclock::DefaultFlockDir(), ""});
  } else {
    // DefaultFlockDir()'s rule, for a process whose environment we cannot
    // see: logind sets XDG_RUNTIME_DIR=/run/user/UID in login sessions;
    // cron jobs and system services run without it.
    target->lock_dirs.push_back(
        {absl::StrCat("/run/user/", target->uid, "/ipclock"),
         "run in a login session (XDG_RUNTIME_DIR set)"});
    target->lock_dirs.push_back(
        {absl::StrCat("/tmp/ipclock-", target->uid),
         "run without a session (cron, a system service)"});
  }
}

void CheckRemoveIpcSetting(const DoctorTarget& target, std::vector<Finding>* out) {
  const ipclock::IpcKind kind = target.ipc_kind.value_or(ipclock::IpcKind::kSysV);
  const ipclock::RemoveIpcReport r = ipclock::CheckRemoveIpc(target.root, target.uid, kind);
  Finding f;
  f.check = "removeipc";
  f.subject = r.source;
  if (r.at_risk) {
    // It deletes SysV and /dev/shm objects, whatever store a program uses;
    // only a store named on the command line that keeps none of them is
    // out of its reach.
    const bool touches_store = target.ipc_kind.has_value() || !target.explicit_store;
    f.level = touches_store ? Level::kRisk : Level::kInfo;
    f.message = absl::StrCat(
        r.reason, ": the user's semaphore, posix-semaphore and shm:// locks "
        "vanish while held, and the next process makes a second lock of the "
        "same name",
        touches_store ? "" : absl::StrCat(" (not the ", target.scheme, " store checked here)"));
    f.advice = absl::StrCat(
        r.advice,
        "; a drop-in is two lines: [Login] and RemoveIPC=no. For a systemd "
        "service, User= with a system user (or DynamicUser=) is exempt");
  } else if (!r.remove_ipc) {
    f.message = absl::StrCat("RemoveIPC=no (", r.source, ")");
  } else if (r.is_system_user) {
    f.message = absl::StrCat("uid ", r.uid, " is a system user (SYS_UID_MAX ",
                             r.sys_uid_max, "), which RemoveIPC spares");
  } else {
    f.message = absl::StrCat("uid ", r.uid, " lingers, so its IPC outlives its sessions");
  }
  out->push_back(std::move(f));
}

void CheckLockDirs(const DoctorTarget& target, std::vector<Finding>* out) {
  for (const DoctorTarget::LockDir& d : target.lock_dirs) {
    CheckLifetime(target, d, out);
    CheckPermissions(target, d, out);
    CheckFilesystem(target, d, out);
  }
}

}  // namespace ipclock_cli
