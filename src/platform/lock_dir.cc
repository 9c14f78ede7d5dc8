// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/lock_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <deque>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "platform/errors.h"
#include "platform/files.h"

namespace ipclock {

namespace {

// As the kernel's limit on links followed in one lookup (MAXSYMLINKS).
constexpr int kMaxLinks = 40;

struct PathDir {
  ScopedFd fd;
  struct stat st;
  std::string shown;  // the dir's path inside the tree, for messages
};

std::string Join(const std::string& dir, absl::string_view name) {
  return dir == "/" ? absl::StrCat("/", name) : absl::StrCat(dir, "/", name);
}

bool Trusted(uid_t owner, uid_t uid) { return owner == uid || owner == 0; }

// Why `dir` must not be passed through to reach its entry `entry_owner`
// (the entry's owner), or "" if it may (see the rule in lock_dir.h).
std::string WhyUnsafe(const struct stat& dir, uid_t entry_owner, uid_t uid) {
  if (!Trusted(dir.st_uid, uid)) {
    return "is owned by another user, who could rename the lock dir away and "
           "put another in its place";
  }
  if ((dir.st_mode & 022) == 0) return "";
  if ((dir.st_mode & S_ISVTX) != 0) {
    // Sticky: others may add entries, but only the entry's owner (or the
    // dir's, or root) may rename or remove one.
    if (Trusted(entry_owner, uid)) return "";
    return absl::StrFormat(
        "is sticky and writable by others, and the entry in it is owned by "
        "uid %d, who could rename it away and put another in its place",
        entry_owner);
  }
  return absl::StrFormat(
      "is writable by %s without the sticky bit, so any of them could rename "
      "the lock dir away and put another in its place (chmod go-w, or +t)",
      (dir.st_mode & S_IWOTH) != 0 ? "all users" : "its group");
}

absl::Status Unsafe(absl::string_view store, const std::string& lock_dir,
                    const PathDir& dir, const std::string& why) {
  return StoreError(absl::StatusCode::kPermissionDenied, store, "",
                    absl::StrFormat("refusing lock dir %s: its ancestor %s "
                                    "(owner uid %d, mode %04o) %s",
                                    lock_dir, dir.shown, dir.st.st_uid,
                                    dir.st.st_mode & 07777, why));
}

void PushComponents(absl::string_view path, std::deque<std::string>* pending) {
  std::vector<std::string> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  pending->insert(pending->begin(), parts.begin(), parts.end());
}

// Resolves `path` (absolute, inside `root`) up to its last component,
// checking every dir it passes through for `uid`. With `create_mode` >= 0,
// missing dirs on the way are created; without, a missing one ends the walk
// early with `*missing` set. On success `*parent` is the last component's
// dir and `*last` its name.
struct WalkResult {
  PathDir parent;
  std::string last;
  bool missing = false;
};

absl::Status WalkToParent(const std::string& path, uid_t uid, absl::string_view store,
                          const std::string& root, int create_mode, WalkResult* out) {
  const std::string shown_lock_dir = path;
  std::deque<std::string> pending;
  PushComponents(path, &pending);
  if (pending.empty() || pending.back() == "." || pending.back() == "..") {
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat("lock dir \"", path,
                                   "\" must name a dir below / (not end in . or ..)"));
  }
  std::vector<PathDir> stack(1);
  if (int err = OpenFileAt(AT_FDCWD, root.c_str(), O_PATH | O_DIRECTORY, 0, &stack[0].fd);
      err != 0) {
    return ErrnoError(err, store, "", absl::StrCat("open ", root));
  }
  if (int err = StatFd(stack[0].fd.get(), &stack[0].st); err != 0) {
    return ErrnoError(err, store, "", absl::StrCat("fstat ", root));
  }
  stack[0].shown = "/";
  int links = 0;
  while (!pending.empty()) {
    std::string name = std::move(pending.front());
    pending.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      if (stack.size() > 1) stack.pop_back();  // ".." of the root is the root
      continue;
    }
    const bool last = pending.empty();
    PathDir& dir = stack.back();
    const std::string shown = Join(dir.shown, name);
    struct stat entry;
    int err = StatAt(dir.fd.get(), name.c_str(), AT_SYMLINK_NOFOLLOW, &entry);
    if (err == ENOENT) {
      // What is missing would be made by us: owned by `uid`.
      if (std::string why = WhyUnsafe(dir.st, uid, uid); !why.empty()) {
        return Unsafe(store, shown_lock_dir, dir, why);
      }
      if (create_mode < 0 || last) {
        out->parent = std::move(dir);
        out->last = name;
        out->missing = true;
        return absl::OkStatus();
      }
      err = MakeDirAt(dir.fd.get(), name.c_str(), static_cast<mode_t>(create_mode));
      if (err != 0 && err != EEXIST) {
        return ErrnoError(err, store, "", absl::StrCat("create lock dir ", shown));
      }
      err = StatAt(dir.fd.get(), name.c_str(), AT_SYMLINK_NOFOLLOW, &entry);
    }
    if (err != 0) return ErrnoError(err, store, "", absl::StrCat("stat ", shown));
    if (std::string why = WhyUnsafe(dir.st, entry.st_uid, uid); !why.empty()) {
      return Unsafe(store, shown_lock_dir, dir, why);
    }
    if (S_ISLNK(entry.st_mode) && !last) {
      if (++links > kMaxLinks) {
        return ErrnoError(ELOOP, store, "", absl::StrCat("resolve lock dir ", path));
      }
      std::string target;
      if (int e = ReadLinkAt(dir.fd.get(), name.c_str(), &target); e != 0) {
        return ErrnoError(e, store, "", absl::StrCat("readlink ", shown));
      }
      if (!target.empty() && target[0] == '/') stack.resize(1);
      PushComponents(target, &pending);
      continue;
    }
    if (last) {
      out->parent = std::move(dir);
      out->last = name;
      return absl::OkStatus();
    }
    if (!S_ISDIR(entry.st_mode)) {
      return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                        absl::StrCat("lock dir ", path, ": ", shown, " is a ",
                                     FileTypeName(entry.st_mode), ", not a dir"));
    }
    PathDir next;
    err = OpenFileAt(dir.fd.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW, 0,
                     &next.fd);
    if (err == 0) err = StatFd(next.fd.get(), &next.st);
    if (err != 0) return ErrnoError(err, store, "", absl::StrCat("open ", shown));
    next.shown = shown;
    stack.push_back(std::move(next));
  }
  // Only "." and ".." left after the last real name: refused above.
  return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                    absl::StrCat("lock dir \"", path, "\" cannot be resolved"));
}

}  // namespace

absl::Status CheckLockDirSafety(const struct stat& st, const std::string& path,
                                absl::string_view store) {
  return CheckLockDirSafetyFor(st, path, store, geteuid());
}

absl::Status CheckLockDirSafetyFor(const struct stat& st, const std::string& path,
                                   absl::string_view store, uid_t me) {
  if (!S_ISDIR(st.st_mode)) {
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat("lock dir ", path, " is not a directory"));
  }
  if (st.st_uid != me && st.st_uid != 0) {
    return StoreError(
        absl::StatusCode::kPermissionDenied, store, "",
        absl::StrFormat("refusing lock dir %s: it is owned by uid %d, not by "
                        "uid %d or root, and its owner could replace our lock "
                        "files",
                        path, st.st_uid, me));
  }
  if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return StoreError(
        absl::StatusCode::kPermissionDenied, store, "",
        absl::StrFormat("refusing lock dir %s: mode %04o is world-writable "
                        "without the sticky bit, so anyone could replace our "
                        "lock files (chmod o-w or +t)",
                        path, st.st_mode & 07777));
  }
  return absl::OkStatus();
}

absl::Status CheckLockDirAncestors(const std::string& path, uid_t uid,
                                   absl::string_view store, const std::string& root) {
  if (path.empty() || path[0] != '/') {
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat("lock dir \"", path, "\" must be an absolute path"));
  }
  WalkResult walk;
  return WalkToParent(path, uid, store, root, -1, &walk);
}

absl::StatusOr<ScopedFd> OpenLockDir(const std::string& path, mode_t create_mode,
                                     absl::string_view store) {
  if (path.empty() || path[0] != '/') {
    return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                      absl::StrCat("lock dir \"", path,
                                   "\" must be an absolute path"));
  }
  const uid_t me = geteuid();
  WalkResult walk;
  if (absl::Status s = WalkToParent(path, me, store, "/", static_cast<int>(create_mode & 07777),
                                    &walk);
      !s.ok()) {
    return s;
  }
  const int parent = walk.parent.fd.get();
  const char* name = walk.last.c_str();
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
  ScopedFd fd;
  int err = OpenFileAt(parent, name, flags, 0, &fd);
  if (err == ENOENT) {
    err = MakeDirAt(parent, name, create_mode);
    if (err != 0 && err != EEXIST) {
      return ErrnoError(err, store, "", absl::StrCat("create lock dir ", path));
    }
    err = OpenFileAt(parent, name, flags, 0, &fd);
  }
  if (err != 0) {
    if (err == ELOOP || err == ENOTDIR) {
      struct stat lst;
      if (StatAt(parent, name, AT_SYMLINK_NOFOLLOW, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        return StoreError(absl::StatusCode::kInvalidArgument, store, "",
                          absl::StrCat("refusing lock dir ", path,
                                       ": it is a symbolic link"));
      }
    }
    return ErrnoError(err, store, "", absl::StrCat("open lock dir ", path));
  }
  struct stat st;
  if (int e = StatFd(fd.get(), &st); e != 0) {
    return ErrnoError(e, store, "", absl::StrCat("fstat lock dir ", path));
  }
  if (absl::Status s = CheckLockDirSafety(st, path, store); !s.ok()) return s;
  if (int e = AccessAt(fd.get(), ".", W_OK | X_OK); e != 0) {
    return ErrnoError(e, store, "",
                      absl::StrCat("lock dir ", path, " is not writable"));
  }
  return fd;
}

}  // namespace ipclock
