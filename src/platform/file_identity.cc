// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/file_identity.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "platform/faults.h"

namespace ipclock {

std::optional<FileIdentity> IdentityOf(const std::string& path) {
  if (TakeFault(FaultPoint::kStat) != 0) return std::nullopt;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{st.st_dev, st.st_ino};
}

ScopedFd OpenForWatching(const std::string& path) {
  if (TakeFault(FaultPoint::kOpen) != 0) return ScopedFd();
  int fd;
  do {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  return ScopedFd(fd);
}

}  // namespace ipclock
