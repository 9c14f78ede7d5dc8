// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// POSIX shared memory objects and their mappings: shm_open, ftruncate,
// fallocate, fstat, stat, flock, mmap, munmap, shm_unlink. Each function
// returns 0 or an errno value, asks platform/faults.h first, and leaves
// messages to its caller.
//
// Caveats, each with the rule that deals with it:
//   * An object named "/NAME" is the file /dev/shm/NAME (glibc puts it
//     there), so a path stat(2) and an inotify watch reach it too.
//   * O_CREAT's mode is cut by the umask. Set the mode a caller promised
//     with SetMode() after creating.
//   * A mapping of a sparse tmpfs file gets its pages on first touch, and a
//     full /dev/shm answers that touch with SIGBUS. ReserveSize() allocates
//     every page at once (fallocate), so that a full /dev/shm is ENOSPC
//     there instead.
//   * Another process that may write the object can also shrink it under
//     our mapping (POSIX shared memory has no seals); a touch past the new
//     end raises SIGBUS. Only the object's mode keeps such processes out.
//   * Unlinking ends neither the mappings nor the descriptors of the
//     object: processes that have it go on using it while new ones create
//     another under the same name. The identity of the object (device,
//     inode) and its link count tell the two apart.

#ifndef IPCLOCK_PLATFORM_SHM_MAPPING_H_
#define IPCLOCK_PLATFORM_SHM_MAPPING_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "platform/coarse_clock.h"
#include "platform/scoped_fd.h"

namespace ipclock {

// What fstat(2) or stat(2) says about an object.
struct ObjectStat {
  dev_t dev = 0;
  ino_t ino = 0;
  nlink_t links = 0;  // 0 once unlinked (while still open)
  uint64_t size = 0;

  bool SameObject(const ObjectStat& other) const {
    return dev == other.dev && ino == other.ino;
  }
};

// shm_open(`shm_name`, `flags` | O_CLOEXEC | O_NOFOLLOW, `mode`): ELOOP for
// a symbolic link, EEXIST for O_CREAT|O_EXCL on an existing object.
[[nodiscard]] int ShmOpen(const std::string& shm_name, int flags, mode_t mode,
                          ScopedFd* fd);

// fchmod(2): sets `mode` exactly, whatever the umask.
[[nodiscard]] int SetMode(int fd, mode_t mode);

// Sets the object's size to `size` and allocates all of it (ftruncate, then
// fallocate): ENOSPC when /dev/shm cannot hold it.
[[nodiscard]] int ReserveSize(int fd, uint64_t size);

// fstat(2) of an open object; stat(2) of a path.
[[nodiscard]] int IdentifyFd(int fd, ObjectStat* out);
[[nodiscard]] int IdentifyPath(const std::string& path, ObjectStat* out);

// flock(2) LOCK_EX|LOCK_NB, retried on EINTR: 0 or EWOULDBLOCK (another
// descriptor holds it) or the errno. UnlockFile(): LOCK_UN.
[[nodiscard]] int TryLockFile(int fd);
[[nodiscard]] int UnlockFile(int fd);

// shm_unlink(2).
[[nodiscard]] int ShmUnlink(const std::string& shm_name);

// A MAP_SHARED mapping of the first `size` bytes of an object, unmapped on
// destruction. munmap(2) of a whole mapping made here fails only for
// arguments that are not one (EINVAL), so its result is not kept.
class SharedMapping {
 public:
  SharedMapping() = default;
  SharedMapping(SharedMapping&& other) noexcept;
  SharedMapping& operator=(SharedMapping&& other) noexcept;
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;
  ~SharedMapping() { Reset(); }

  // Maps `fd` read-only or read-write into `*out` (replacing what it held).
  [[nodiscard]] static int Map(int fd, size_t size, bool writable,
                               SharedMapping* out);

  void* data() const { return data_; }
  size_t size() const { return size_; }
  void Reset();

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// The clocks of the shm store's periodic checks, both read through the
// vDSO without a system call: CLOCK_MONOTONIC_COARSE in nanoseconds (its
// resolution is one kernel tick, 1 to 10 ms; platform/coarse_clock.h), and
// the wall clock's whole seconds (time(2), several times cheaper: cheap
// enough for every release).
int64_t WallClockSeconds();  // clocks.cc

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SHM_MAPPING_H_
