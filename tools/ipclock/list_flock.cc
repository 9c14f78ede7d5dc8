// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list` for flock stores: who holds which lock file, from
// /proc/locks.
//
// A line of /proc/locks reads
//   3: FLOCK  ADVISORY  WRITE 4242 08:02:1311022 0 EOF
//   3: -> FLOCK  ADVISORY  WRITE 4250 08:02:1311022 0 EOF
// with the device as hex major:minor and the inode in decimal; a "->" line
// is a process blocked waiting for the lock of the line above it.
//
// Caveats:
//   * The pid is the process that took the lock. A flock lock belongs to
//     the open file, so after that process forked and exited, a child that
//     kept the descriptor holds it under a pid that is gone.
//   * Pids of processes in other pid namespaces show as they do in ours, or
//     as 0 when they have no pid here.
//   * On btrfs, stat(2) reports a per-subvolume device while /proc/locks
//     shows the filesystem's, so there files are matched by inode alone.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "platform/errors.h"
#include "list_sources.h"
#include "platform/scoped_fd.h"
#include "platform/small_file.h"
#include "stores/flock_store.h"

namespace ipclock_cli {

namespace {

constexpr long kBtrfsMagic = 0x9123683e;
// /proc/locks lists every lock on the host; allow for a busy one.
constexpr size_t kMaxProcLocksBytes = 64 << 20;

struct ProcLock {
  bool waiting = false;
  bool write = false;
  pid_t pid = 0;
  unsigned major = 0;
  unsigned minor = 0;
  uint64_t inode = 0;
};

// The FLOCK lines of /proc/locks; POSIX and OFD record locks are not ours.
std::vector<ProcLock> ParseProcLocks(absl::string_view text) {
  std::vector<ProcLock> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    ProcLock l;
    size_t i = 1;  // past "N:"
    if (i < f.size() && f[i] == "->") {
      l.waiting = true;
      ++i;
    }
    if (f.size() < i + 5 || f[i] != "FLOCK") continue;
    l.write = f[i + 2] == "WRITE";
    int pid = 0;
    if (!absl::SimpleAtoi(f[i + 3], &pid)) continue;
    l.pid = pid;
    std::vector<absl::string_view> dev = absl::StrSplit(f[i + 4], ':');
    if (dev.size() != 3 || !absl::SimpleHexAtoi(dev[0], &l.major) ||
        !absl::SimpleHexAtoi(dev[1], &l.minor) || !absl::SimpleAtoi(dev[2], &l.inode)) {
      continue;
    }
    out.push_back(l);
  }
  return out;
}

// "sf.<readable>.<7 chars>.lock" -> "<readable>"; empty for other names.
std::string ReadablePart(absl::string_view name) {
  constexpr absl::string_view kPrefix = "sf.";
  constexpr size_t kSuffix = 13;  // ".<7 chars>.lock"
  if (!absl::StartsWith(name, kPrefix) || !absl::EndsWith(name, ".lock") ||
      name.size() < kPrefix.size() + kSuffix) {
    return "";
  }
  return std::string(name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix));
}

struct LockFile {
  std::string name;
  struct stat st;
};

}  // namespace

absl::StatusOr<std::vector<LockRow>> ListFlockDir(const std::string& dir, bool any_file) {
  const std::string store = absl::StrCat("flock://", dir);
  ipclock::ScopedFd dirfd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dirfd.valid()) {
    return ipclock::ErrnoError(errno, store, "", absl::StrCat("open lock dir ", dir));
  }
  struct statfs fs;
  const bool by_inode_only =
      fstatfs(dirfd.get(), &fs) == 0 && static_cast<long>(fs.f_type) == kBtrfsMagic;

  // Lock files by inode. Stat through the dir's descriptor, not following
  // links: a link in the dir is not a lock file the store would use.
  std::multimap<uint64_t, LockFile> files;
  DIR* d = fdopendir(dup(dirfd.get()));
  if (d == nullptr) {
    return ipclock::ErrnoError(errno, store, "", absl::StrCat("read lock dir ", dir));
  }
  while (struct dirent* e = readdir(d)) {
    absl::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (!any_file && ReadablePart(name).empty()) continue;
    LockFile f;
    f.name = std::string(name);
    if (fstatat(dirfd.get(), e->d_name, &f.st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(f.st.st_mode)) {
      continue;
    }
    files.emplace(f.st.st_ino, std::move(f));
  }
  closedir(d);
  if (files.empty()) return std::vector<LockRow>();

  std::optional<std::string> proc_locks =
      ipclock::ReadSmallFile("/proc/locks", kMaxProcLocksBytes);
  if (!proc_locks) {
    return ipclock::StoreError(absl::StatusCode::kUnavailable, store, "",
                               "cannot read /proc/locks (is /proc mounted?)");
  }
  const std::vector<ProcLock> locks = ParseProcLocks(*proc_locks);
  const auto find = [&](const ProcLock& l) -> const LockFile* {
    auto [first, last] = files.equal_range(l.inode);
    for (auto it = first; it != last; ++it) {
      if (by_inode_only || (major(it->second.st.st_dev) == l.major &&
                            minor(it->second.st.st_dev) == l.minor)) {
        return &it->second;
      }
    }
    return nullptr;
  };
  std::map<const LockFile*, int64_t> waiters;
  for (const ProcLock& l : locks) {
    if (!l.waiting) continue;
    if (const LockFile* f = find(l)) ++waiters[f];
  }

  std::vector<LockRow> rows;
  for (const ProcLock& l : locks) {
    if (l.waiting) continue;
    const LockFile* f = find(l);
    if (f == nullptr) continue;
    LockRow row;
    row.object = f->name;
    row.resource = any_file ? f->name : ReadablePart(f->name);
    row.mode = l.write ? "exclusive" : "shared";
    row.pid = l.pid;
    row.command = CommandName(l.pid);
    row.waiters = waiters[f];

    // The holder record, if the file has one. Reading needs no lock: the
    // record is written in one pwrite(2) of 64 bytes.
    ipclock::ScopedFd fd(openat(dirfd.get(), f->name.c_str(),
                                O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    char buf[128];
    ipclock::FlockHolderRecord record;
    const ssize_t n =
        fd.valid() ? pread(fd.get(), buf, ipclock::FlockHolderRecordSize(), 0) : -1;
    struct stat now;
    if (n > 0 &&
        ipclock::ParseFlockHolderRecord(absl::string_view(buf, static_cast<size_t>(n)),
                                        &record) &&
        fstat(fd.get(), &now) == 0) {
      row.fence = static_cast<int64_t>(record.fence);
      row.text_details.emplace_back("held_mark", record.held ? "1" : "0");
      // The record carries no time, but an exclusive holder rewrites it right
      // after locking, and nothing else writes the file while the lock is
      // held: its mtime is then the acquisition time. Only when the record is
      // this holder's own (held mark set, same pid); a shared holder or a
      // program that ignores the record (PHP, flock(1)) leaves an older time.
      if (l.write && record.held && record.pid == l.pid) {
        row.since = static_cast<int64_t>(now.st_mtim.tv_sec);
        row.since_source =
            "lock file mtime (the holder record is rewritten at acquisition)";
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ipclock_cli
