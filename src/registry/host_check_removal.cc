// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The checks of what deletes or replaces locks: systemd-logind's RemoveIPC,
// and lock dirs that vanish, are cleaned, are unsafe along their path, or
// sit on a network filesystem.

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "registry/host_check_internal.h"
#include "platform/host_probe.h"
#include "platform/lock_dir.h"

namespace ipclock {
namespace host_check {

namespace {

// Filesystems where flock(2) is emulated, lost on failover, or up to a
// userspace daemon (statfs f_type values from linux/magic.h).
struct RemoteFs {
  long magic;
  const char* name;
};
constexpr RemoteFs kRemoteFilesystems[] = {
    {0x6969, "NFS"},
    {0x517b, "SMB"},
    {static_cast<long>(0xff534d42), "CIFS"},
    {static_cast<long>(0xfe534d42), "SMB2"},
    {0x65735546, "FUSE"},
    {0x01021997, "9p"},
    {0x00c36400, "Ceph"},
    {0x5346414f, "AFS"},
};

// `path`, or its nearest ancestor that exists.
std::string NearestExisting(std::string path) {
  while (InspectPath(path, /*follow=*/false).error == ENOENT) {
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
Level RiskFor(const Target::LockDir& d) { return d.when.empty() ? Level::kRisk : Level::kInfo; }

std::string Qualified(const Target::LockDir& d, absl::string_view message) {
  if (d.when.empty()) return std::string(message);
  return absl::StrCat("when ", d.when, ": ", message);
}

// The first dir above `dir` (as the target sees it) that a user other than
// root and `target.uid` could use to rename `dir` away and put another in
// its place: owned by such a user, or writable by group or others without
// the sticky bit (which keeps others from renaming entries they do not own).
// This is the rule OpenSSH's StrictModes applies to ~/.ssh, relaxed for
// sticky dirs such as /tmp and /run/lock. Dirs that do not exist yet are
// made by the first lock, with the store's mode and our owner. In a tree,
// the tree's own root is not judged (its owner is the image builder's), and
// symlinks are not followed (they point into the target system).
struct UnsafeAncestor {
  std::string dir;
  std::string why;
};
std::optional<UnsafeAncestor> FindUnsafeAncestor(const Target& target, absl::string_view dir) {
  std::string prefix(dir);
  for (;;) {
    const size_t slash = prefix.find_last_of('/');
    if (slash == std::string::npos || prefix == "/") return std::nullopt;
    prefix = slash == 0 ? "/" : prefix.substr(0, slash);
    if (!target.host && prefix == "/") return std::nullopt;
    const std::string path = target.InTree(prefix);
    PathInfo info = InspectPath(path, /*follow=*/false);
    if (info.error == 0 && info.is_symlink) {
      if (!target.host) continue;
      info = InspectPath(path, /*follow=*/true);
    }
    if (info.error != 0) continue;
    if (info.uid != 0 && info.uid != target.uid) {
      return UnsafeAncestor{prefix, absl::StrFormat("is owned by uid %d, who can rename the "
                                                    "lock dir away and make another",
                                                    info.uid)};
    }
    if ((info.mode & (S_IWGRP | S_IWOTH)) != 0 && (info.mode & S_ISVTX) == 0) {
      return UnsafeAncestor{
          prefix, absl::StrFormat("has mode %04o: %s can rename the lock dir away and make "
                                  "another",
                                  info.mode, (info.mode & S_IWOTH) ? "anyone" : "its group")};
    }
  }
}

void CheckLifetime(const Target& target, const Target::LockDir& d,
                   std::vector<HostFinding>* out) {
  const RemoveIpcReport r = CheckRemoveIpc(target.root, target.uid, IpcKind::kLockDir, d.dir);
  HostFinding f = Finding(Level::kOk, "lock-dir-lifetime", d.dir);
  if (r.at_risk || r.may_be_cleaned) {
    f.level = RiskFor(d);
    f.message = Qualified(d, r.reason);
    f.advice = r.advice;
  } else {
    f.message = Qualified(d, r.lingering ? "the dir is in a runtime dir, but its user lingers"
                                         : "not removed at logout and not under a tmp dir");
  }
  out->push_back(std::move(f));
}

void CheckPermissions(const Target& target, const Target::LockDir& d,
                      std::vector<HostFinding>* out) {
  const std::string path = target.InTree(d.dir);
  HostFinding f = Finding(Level::kOk, "lock-dir-permissions", d.dir);
  const PathInfo info = InspectPath(path, /*follow=*/false);
  // The store's own rule for the dir, applied to what lstat found.
  struct stat st = {};
  st.st_mode = info.mode | (info.is_dir ? S_IFDIR : S_IFREG);
  st.st_uid = info.uid;
  absl::Status safe;
  if (info.error == 0 && !info.is_symlink) {
    safe = CheckLockDirSafetyFor(st, d.dir, absl::StrCat("flock://", d.dir), target.uid);
  }
  if (info.error == 0 && info.is_symlink) {
    f.level = RiskFor(d);
    f.message = Qualified(d, "is a symbolic link, which the flock store refuses: "
                             "whoever controls the link controls the locks");
    f.advice = "point --store at the real dir";
  } else if (!safe.ok()) {
    f.level = RiskFor(d);
    f.message = Qualified(d, StatusText(safe));
    f.advice = absl::StrCat("make the dir owned by uid ", target.uid,
                            " or root and not writable by others: chown ", target.uid, " ",
                            d.dir, "; chmod 0700 ", d.dir,
                            " (or 1777 for a dir shared by several users)");
  } else if (std::optional<UnsafeAncestor> bad = FindUnsafeAncestor(target, d.dir)) {
    f.level = RiskFor(d);
    f.message = Qualified(d, absl::StrCat("the dir ", bad->dir, " above it ", bad->why,
                                          ": every lock in it can be replaced"));
    f.advice = absl::StrCat("make ", bad->dir, " owned by root (or uid ", target.uid,
                            ") and not writable by group or others (chmod go-w ", bad->dir,
                            "), give it the sticky bit (chmod +t), or keep the lock dir "
                            "elsewhere, such as /run/lock/APP");
  } else if (info.error != 0) {
    f.message = Qualified(
        d, absl::StrCat("does not exist yet (", strerror(info.error),
                        "); the first lock creates it with mode 0700 in ",
                        target.OutOfTree(NearestExisting(path)),
                        ", and no dir above it can be written by other users"));
  } else {
    f.message = Qualified(d, absl::StrFormat("mode %04o, owner uid %d: safe, and no dir "
                                             "above it can be written by other users",
                                             info.mode, info.uid));
  }
  out->push_back(std::move(f));
}

void CheckFilesystem(const Target& target, const Target::LockDir& d,
                     std::vector<HostFinding>* out) {
  const std::string existing = NearestExisting(target.InTree(d.dir));
  const std::optional<long> magic = FilesystemMagic(existing);
  if (!magic) return;
  HostFinding f = Finding(Level::kOk, "lock-dir-filesystem", d.dir);
  for (const RemoteFs& r : kRemoteFilesystems) {
    if (*magic != r.magic) continue;
    // A tree mounted here says little about the filesystem the target
    // system will have.
    f.level = target.host ? RiskFor(d) : Level::kInfo;
    f.message = Qualified(
        d, absl::StrCat(target.OutOfTree(existing), " is on ", r.name,
                        ": flock(2) there is emulated with byte-range locks or "
                        "not shared between hosts, and a server or daemon "
                        "restart can drop held locks"));
    f.advice = "keep lock dirs on a local filesystem, such as /run/lock/APP";
    out->push_back(std::move(f));
    return;
  }
  f.message = Qualified(d, absl::StrCat("on a local filesystem (f_type 0x", absl::Hex(*magic), ")"));
  out->push_back(std::move(f));
}

}  // namespace

void CheckRemoveIpcSetting(const Target& target, std::vector<HostFinding>* out) {
  // Lock files are out of RemoveIPC's reach; what it would delete of a
  // program's other locks is checked as for SysV IPC.
  const IpcKind kind = target.ipc_kind.has_value() && *target.ipc_kind != IpcKind::kLockDir
                           ? *target.ipc_kind
                           : IpcKind::kSysV;
  const RemoveIpcReport r = CheckRemoveIpc(target.root, target.uid, kind);
  HostFinding f = Finding(Level::kOk, "removeipc", r.source);
  if (r.at_risk) {
    // It deletes SysV and /dev/shm objects, whatever store a program uses;
    // only a store named by the user that keeps none of them (a lock dir, a
    // server) is out of its reach.
    const bool touches_store =
        (target.ipc_kind.has_value() && *target.ipc_kind != IpcKind::kLockDir) ||
        !target.explicit_store;
    f.level = touches_store ? Level::kRisk : Level::kInfo;
    f.message = absl::StrCat(
        r.reason,
        ": the user's semaphore, posix-semaphore and shm:// locks "
        "vanish while held, and the next process makes a second lock of the "
        "same name",
        touches_store ? "" : absl::StrCat(" (not the ", target.store, " store checked here)"));
    f.advice = absl::StrCat(r.advice,
                            "; a drop-in is two lines: [Login] and RemoveIPC=no. For a "
                            "systemd service, User= with a system user (or DynamicUser=) "
                            "is exempt");
  } else if (!r.remove_ipc) {
    f.message = absl::StrCat("RemoveIPC=no (", r.source, ")");
  } else if (r.is_system_user) {
    f.message = absl::StrCat("uid ", r.uid, " is a system user (SYS_UID_MAX ", r.sys_uid_max,
                             "), which RemoveIPC spares");
  } else {
    f.message = absl::StrCat("uid ", r.uid, " lingers, so its IPC outlives its sessions");
  }
  out->push_back(std::move(f));
}

void CheckLockDirs(const Target& target, std::vector<HostFinding>* out) {
  for (const Target::LockDir& d : target.lock_dirs) {
    CheckLifetime(target, d, out);
    CheckPermissions(target, d, out);
    CheckFilesystem(target, d, out);
  }
}

}  // namespace host_check
}  // namespace ipclock
