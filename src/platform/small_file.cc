// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/small_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "platform/errors.h"
#include "platform/faults.h"
#include "platform/scoped_fd.h"

namespace ipclock {

absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            size_t max_bytes,
                                            absl::string_view who) {
  int fd;
  do {
    const int fault = TakeFault(FaultPoint::kOpen);
    if (fault != 0) {
      errno = fault;
      fd = -1;
    } else {
      fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    }
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoError(errno, who, "", absl::StrCat("open ", path));
  ScopedFd owned(fd);
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoError(errno, who, "", absl::StrCat("fstat ", path));
  if (!S_ISREG(st.st_mode)) {
    return StoreError(absl::StatusCode::kFailedPrecondition, who, "",
                      absl::StrCat(path, " is not a regular file (a FIFO, device "
                                         "or directory is never read)"));
  }
  std::string out;
  char buf[4096];
  for (;;) {
    const int fault = TakeFault(FaultPoint::kRead);
    ssize_t n;
    if (fault != 0) {
      errno = fault;
      n = -1;
    } else {
      n = read(fd, buf, sizeof(buf));
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, who, "", absl::StrCat("read ", path));
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      return StoreError(absl::StatusCode::kResourceExhausted, who, "",
                        absl::StrCat(path, " is larger than ", max_bytes, " bytes"));
    }
  }
  return out;
}

std::optional<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  absl::StatusOr<std::string> text = ReadRegularFile(path, max_bytes, "ipclock");
  if (!text.ok()) return std::nullopt;
  return *std::move(text);
}

}  // namespace ipclock
