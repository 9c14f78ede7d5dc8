// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/dir_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "platform/errors.h"
#include "platform/faults.h"
#include "platform/scoped_fd.h"

namespace ipclock {

namespace {
constexpr long kBtrfsMagic = 0x9123683e;

int OpenWithFault(int dirfd, const char* path, int flags) {
  if (const int fault = TakeFault(FaultPoint::kOpen); fault != 0) {
    errno = fault;
    return -1;
  }
  int fd;
  do {
    fd = openat(dirfd, path, flags);
  } while (fd < 0 && errno == EINTR);
  return fd;
}
}  // namespace

absl::StatusOr<DirListing> ListRegularFiles(
    const std::string& dir, absl::string_view who,
    const std::function<bool(absl::string_view name)>& wanted) {
  ScopedFd dirfd(OpenWithFault(AT_FDCWD, dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dirfd.valid()) return ErrnoError(errno, who, "", absl::StrCat("open dir ", dir));
  DirListing out;
  struct statfs fs;
  out.btrfs = fstatfs(dirfd.get(), &fs) == 0 && static_cast<long>(fs.f_type) == kBtrfsMagic;

  // readdir works on its own descriptor: fdopendir takes the one it is given.
  const int scan_fd = fcntl(dirfd.get(), F_DUPFD_CLOEXEC, 0);
  if (scan_fd < 0) return ErrnoError(errno, who, "", absl::StrCat("dup dir ", dir));
  DIR* d = fdopendir(scan_fd);
  if (d == nullptr) {
    const int err = errno;
    close(scan_fd);
    return ErrnoError(err, who, "", absl::StrCat("read dir ", dir));
  }
  for (;;) {
    errno = 0;
    struct dirent* e = readdir(d);
    if (e == nullptr) {
      if (errno != 0) {
        const int err = errno;
        closedir(d);
        return ErrnoError(err, who, "", absl::StrCat("read dir ", dir));
      }
      break;
    }
    absl::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (wanted && !wanted(name)) continue;
    struct stat st;
    // A file removed since readdir saw it is simply not there any more.
    if (fstatat(dirfd.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
      continue;
    }
    DirFile f;
    f.name = std::string(name);
    f.dev_major = major(st.st_dev);
    f.dev_minor = minor(st.st_dev);
    f.inode = static_cast<uint64_t>(st.st_ino);
    out.files.push_back(std::move(f));
  }
  closedir(d);
  return out;
}

absl::StatusOr<FileHead> ReadFileHead(const std::string& path, size_t max_bytes,
                                      absl::string_view who) {
  ScopedFd fd(OpenWithFault(AT_FDCWD, path.c_str(),
                            O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) return ErrnoError(errno, who, "", absl::StrCat("open ", path));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, who, "", absl::StrCat("fstat ", path));
  if (!S_ISREG(st.st_mode)) {
    return StoreError(absl::StatusCode::kFailedPrecondition, who, "",
                      absl::StrCat(path, " is not a regular file"));
  }
  FileHead head;
  head.mtime_seconds = static_cast<int64_t>(st.st_mtim.tv_sec);
  head.bytes.resize(max_bytes);
  ssize_t n;
  do {
    if (const int fault = TakeFault(FaultPoint::kRead); fault != 0) {
      errno = fault;
      n = -1;
    } else {
      n = pread(fd.get(), head.bytes.data(), max_bytes, 0);
    }
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoError(errno, who, "", absl::StrCat("read ", path));
  head.bytes.resize(static_cast<size_t>(n));
  return head;
}

}  // namespace ipclock
