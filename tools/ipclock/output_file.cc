// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/str_cat.h"

namespace ipclock_cli {

namespace {

constexpr size_t kMaxPreviousBytes = 64 << 20;

absl::Status FileError(int err, absl::string_view what, absl::string_view path) {
  return absl::ErrnoToStatus(err, absl::StrCat("ipclock: ", what, " ", path));
}

bool WriteAll(int fd, absl::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::Status ReplaceFile(const std::string& path, absl::string_view text) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) return FileError(EISDIR, "write", path);
  std::string temp = absl::StrCat(dir, "/.", base, ".XXXXXX");
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return FileError(errno, "create a file beside", path);
  temp = name.data();
  // The mode of the file it replaces, else readable by the collector's user.
  struct stat old;
  const mode_t mode = stat(path.c_str(), &old) == 0 ? (old.st_mode & 07777) : 0644;
  int err = 0;
  if (fchmod(fd, mode) != 0 || !WriteAll(fd, text) || fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && rename(temp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(temp.c_str());
    return FileError(err, "write", path);
  }
  // The rename itself reaches the disk with the directory.
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)fsync(dir_fd);
    close(dir_fd);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> ReadFileIfAny(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return FileError(errno, "read", path);
  }
  struct stat st;
  int err = fstat(fd, &st) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
  if (err != 0) {
    close(fd);
    return FileError(err, "read (a regular file)", path);
  }
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || out.size() + static_cast<size_t>(n) > kMaxPreviousBytes) {
      err = n < 0 ? errno : EFBIG;
      close(fd);
      return FileError(err, "read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return std::optional<std::string>(std::move(out));
}

}  // namespace ipclock_cli
