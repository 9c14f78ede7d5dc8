// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/host_probe.h"

#include <errno.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ipclock_config.h"
#include "platform/errors.h"
#include "platform/small_file.h"

#if IPCLOCK_HAVE_IO_URING
#include <liburing.h>
#endif

namespace ipclock {

namespace {

bool IsHostRoot(absl::string_view root) {
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  return root.empty();
}

// Looks `name` (or, with `by_uid`, `uid`) up in the passwd text of a tree.
std::optional<UserEntry> FindInPasswd(absl::string_view text, bool by_uid, uid_t uid,
                                      absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ':');
    uid_t u;
    if (f.size() < 3 || !absl::SimpleAtoi(f[2], &u)) continue;
    if (by_uid ? u == uid : f[0] == name) return UserEntry{u, std::string(f[0])};
  }
  return std::nullopt;
}

std::optional<UserEntry> Find(absl::string_view root, bool by_uid, uid_t uid,
                              absl::string_view name) {
  if (IsHostRoot(root)) {
    std::vector<char> buf(16384);
    struct passwd pw;
    struct passwd* found = nullptr;
    const std::string name_text(name);
    const int err = by_uid ? getpwuid_r(uid, &pw, buf.data(), buf.size(), &found)
                           : getpwnam_r(name_text.c_str(), &pw, buf.data(), buf.size(), &found);
    if (err != 0 || found == nullptr) return std::nullopt;
    return UserEntry{found->pw_uid, found->pw_name};
  }
  absl::string_view r = root;
  while (!r.empty() && r.back() == '/') r.remove_suffix(1);
  std::optional<std::string> passwd = ReadSmallFile(absl::StrCat(r, "/etc/passwd"));
  if (!passwd) return std::nullopt;
  return FindInPasswd(*passwd, by_uid, uid, name);
}

}  // namespace

PathInfo InspectPath(const std::string& path, bool follow) {
  PathInfo info;
  struct stat st;
  if ((follow ? stat(path.c_str(), &st) : lstat(path.c_str(), &st)) != 0) {
    info.error = errno;
    return info;
  }
  info.is_dir = S_ISDIR(st.st_mode);
  info.is_regular = S_ISREG(st.st_mode);
  info.is_symlink = S_ISLNK(st.st_mode);
  info.uid = st.st_uid;
  info.mode = st.st_mode & 07777;
  return info;
}

std::optional<long> FilesystemMagic(const std::string& path) {
  struct statfs fs;
  if (statfs(path.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<long>(fs.f_type);
}

std::optional<UserEntry> LookUpUser(absl::string_view root, absl::string_view name_or_uid) {
  uid_t uid;
  if (absl::SimpleAtoi(name_or_uid, &uid) && uid != static_cast<uid_t>(-1)) {
    return UserOfUid(root, uid);
  }
  return Find(root, /*by_uid=*/false, 0, name_or_uid);
}

UserEntry UserOfUid(absl::string_view root, uid_t uid) {
  std::optional<UserEntry> found = Find(root, /*by_uid=*/true, uid, "");
  return found ? *found : UserEntry{uid, ""};
}

absl::Status ProbeIoUring() {
#if IPCLOCK_HAVE_IO_URING
  // The kernel setting says what is allowed; seccomp filters (containers)
  // and group rules can still refuse us, which only a real ring shows.
  struct io_uring ring;
  const int err = io_uring_queue_init(2, &ring, 0);
  if (err != 0) return ErrnoError(-err, "io_uring", "", "io_uring_setup");
  io_uring_queue_exit(&ring);
  return absl::OkStatus();
#else
  return absl::UnimplementedError("this build has no liburing");
#endif
}

}  // namespace ipclock
