// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the watch on held locks (core/watch_loop.cc) sleeps on: one inotify
// instance for the inodes of held lock files, lock dirs and /dev/shm
// objects, an eventfd to be woken by other threads, and any descriptors
// (database sockets) whose readability or hangup may mean a lost lock.
//
// Caveats of inotify, which the watch relies on knowingly:
//   * A watch is on an inode, added here through /proc/self/fd/N so that it
//     is the inode the store holds open, never whatever a path names now.
//   * Unlinking a file that is still open does not produce IN_DELETE_SELF
//     (the inode lives on while open); it produces IN_ATTRIB, for the link
//     count. Renaming produces IN_MOVE_SELF. Both are asked for.
//   * Events on a dir do not cover its ancestors: a rename of a parent dir
//     is seen only by the store's periodic check, which resolves the path.
//   * The queue can overflow (IN_Q_OVERFLOW) under a storm of events; every
//     watch then counts as fired.
//   * A mount over a watched file or dir hides it from its path and sends
//     no inotify event: /proc/self/mountinfo, polled for POLLPRI, tells of
//     every change to the process's mount table instead (one descriptor
//     for every lock; the kernel marks it at each mount, unmount or
//     propagation, and a poll that reports it clears the mark).

#ifndef IPCLOCK_PLATFORM_KERNEL_EVENTS_H_
#define IPCLOCK_PLATFORM_KERNEL_EVENTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/scoped_fd.h"

namespace ipclock {

class KernelEvents {
 public:
  // InvalidArgument never; the OS error if inotify or eventfd cannot be
  // made (e.g. ResourceExhausted at fs.inotify.max_user_instances).
  static absl::StatusOr<KernelEvents> Create();

  KernelEvents(KernelEvents&&) = default;
  KernelEvents& operator=(KernelEvents&&) = default;

  // Watches the inode open as `fd` for unlinking, renaming and removal.
  // Returns the watch descriptor (the same one for the same inode).
  absl::StatusOr<int> WatchInode(int fd);
  // Watches the dir open as `fd` for its own renaming and removal only,
  // not for changes to what is in it (a dir above a lock dir: /tmp sees
  // many). Added to, never narrowing, a watch the inode already has.
  absl::StatusOr<int> WatchDirMoves(int fd);
  // Ends a watch. Errors (a watch the kernel already dropped) are ignored.
  void Unwatch(int wd);

  // Opens /proc/self/mountinfo, once; mounts_fd() then names it, for
  // Wait() to return when the process's mount table changes. The OS error
  // if it cannot be opened. Not thread-safe against a Wait() in progress:
  // the caller passes mounts_fd() to Wait() as read under its own mutex.
  absl::Status WatchMounts();
  // The descriptor WatchMounts() opened, or -1. It stays open and the same
  // for the life of this object.
  int mounts_fd() const { return mounts_.valid() ? mounts_.get() : -1; }

  // Makes a Wait() in progress, or the next one, return. Thread-safe.
  void Wake() const;

  struct Fired {
    std::vector<int> wds;       // watches that saw something
    bool overflow = false;      // the queue overflowed: assume every watch fired
    std::vector<int> poll_fds;  // readable, hung up or in error
    bool woken = false;         // by Wake()
    bool mounts = false;        // the mount table changed (WatchMounts())
    bool any() const {
      return !wds.empty() || overflow || !poll_fds.empty() || woken || mounts;
    }
  };
  // Sleeps until an inode event, a Wake(), one of `poll_fds` becoming
  // readable or hanging up, a change of the mount table when `mounts_fd`
  // is mounts_fd() (-1: not watched), or `timeout_ms` (-1: no timeout).
  // EINTR is a plain return. Reads no member that another thread writes.
  Fired Wait(const std::vector<int>& poll_fds, int mounts_fd, int timeout_ms);

 private:
  KernelEvents(ScopedFd inotify, ScopedFd wake)
      : inotify_(std::move(inotify)), wake_(std::move(wake)) {}
  void DrainInotify(Fired* fired);
  absl::StatusOr<int> AddWatch(int fd, uint32_t mask);

  ScopedFd inotify_;
  ScopedFd wake_;
  ScopedFd mounts_;  // /proc/self/mountinfo, once WatchMounts() opened it
};

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_KERNEL_EVENTS_H_
