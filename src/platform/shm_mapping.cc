// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/shm_mapping.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "platform/descriptors.h"
#include "platform/faults.h"
#include "platform/files.h"

namespace ipclock {

namespace {

void FromStat(const struct stat& st, ObjectStat* out) {
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  out->links = st.st_nlink;
  out->size = st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

int ShmOpen(const std::string& shm_name, int flags, mode_t mode, ScopedFd* fd) {
  if (int err = TakeFault(FaultPoint::kOpen); err != 0) return err;
  const int opened = AboveStdio(shm_open(shm_name.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, mode));
  if (opened < 0) return errno;
  fd->reset(opened);
  return 0;
}

int SetMode(int fd, mode_t mode) {
  if (int err = TakeFault(FaultPoint::kChmod); err != 0) return err;
  return fchmod(fd, mode) == 0 ? 0 : errno;
}

int ReserveSize(int fd, uint64_t size) {
  if (int err = TakeFault(FaultPoint::kTruncate); err != 0) return err;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) return errno;
  if (int err = TakeFault(FaultPoint::kTruncate); err != 0) return err;
  for (;;) {
    if (fallocate(fd, 0, 0, static_cast<off_t>(size)) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

int IdentifyFd(int fd, ObjectStat* out) {
  if (int err = TakeFault(FaultPoint::kStat); err != 0) return err;
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  FromStat(st, out);
  return 0;
}

int IdentifyPath(const std::string& path, ObjectStat* out) {
  if (int err = TakeFault(FaultPoint::kStat); err != 0) return err;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return errno;
  FromStat(st, out);
  return 0;
}

int TryLockFile(int fd) { return FlockFdRestarting(fd, LOCK_EX | LOCK_NB); }

int UnlockFile(int fd) { return FlockFdRestarting(fd, LOCK_UN); }

int ShmUnlink(const std::string& shm_name) {
  if (int err = TakeFault(FaultPoint::kUnlink); err != 0) return err;
  return shm_unlink(shm_name.c_str()) == 0 ? 0 : errno;
}

SharedMapping::SharedMapping(SharedMapping&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedMapping& SharedMapping::operator=(SharedMapping&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

int SharedMapping::Map(int fd, size_t size, bool writable, SharedMapping* out) {
  if (int err = TakeFault(FaultPoint::kMmap); err != 0) return err;
  const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  void* p = mmap(nullptr, size, prot, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return errno;
  out->Reset();
  out->data_ = p;
  out->size_ = size;
  return 0;
}

void SharedMapping::Reset() {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace ipclock
