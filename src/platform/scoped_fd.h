// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_PLATFORM_SCOPED_FD_H_
#define IPCLOCK_PLATFORM_SCOPED_FD_H_

#include <utility>

namespace ipclock {

// Owns a file descriptor and closes it on destruction. close(2) errors are
// ignored on purpose: on Linux the descriptor is gone either way, and
// retrying close on EINTR can close a descriptor another thread just got.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) Close(fd_);
    fd_ = fd;
  }

 private:
  // close(2) out of line, here in the platform layer, not in every object
  // that owns a descriptor.
  static void Close(int fd);

  int fd_ = -1;
};

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SCOPED_FD_H_
