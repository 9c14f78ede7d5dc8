// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/kernel_events.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/errors.h"

namespace ipclock {
namespace {

constexpr uint32_t kInodeMask = IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr absl::string_view kWho = "lock watch";

}  // namespace

absl::StatusOr<KernelEvents> KernelEvents::Create() {
  ScopedFd inotify(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify.valid()) return ErrnoError(errno, kWho, "", "inotify_init1");
  ScopedFd wake(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake.valid()) return ErrnoError(errno, kWho, "", "eventfd");
  return KernelEvents(std::move(inotify), std::move(wake));
}

absl::Status KernelEvents::WatchMounts() {
  if (mounts_.valid()) return absl::OkStatus();
  ScopedFd mounts(open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  if (!mounts.valid()) return ErrnoError(errno, kWho, "", "open /proc/self/mountinfo");
  mounts_ = std::move(mounts);
  return absl::OkStatus();
}

absl::StatusOr<int> KernelEvents::WatchInode(int fd) { return AddWatch(fd, kInodeMask); }

absl::StatusOr<int> KernelEvents::WatchDirMoves(int fd) {
  // kInodeMask, set on the same inode later, keeps these bits.
  return AddWatch(fd, IN_DELETE_SELF | IN_MOVE_SELF | IN_MASK_ADD);
}

absl::StatusOr<int> KernelEvents::AddWatch(int fd, uint32_t mask) {
  // The magic link names the open inode, even one that has been unlinked.
  const std::string path = absl::StrCat("/proc/self/fd/", fd);
  int wd = inotify_add_watch(inotify_.get(), path.c_str(), mask);
  if (wd < 0) return ErrnoError(errno, kWho, "", absl::StrCat("inotify_add_watch ", path));
  return wd;
}

void KernelEvents::Unwatch(int wd) { inotify_rm_watch(inotify_.get(), wd); }

void KernelEvents::Wake() const {
  const uint64_t one = 1;
  // EAGAIN means the counter is saturated: a wake is pending anyway.
  ssize_t n = write(wake_.get(), &one, sizeof(one));
  (void)n;
}

void KernelEvents::DrainInotify(Fired* fired) {
  alignas(struct inotify_event) char buf[4096];
  for (;;) {
    ssize_t n = read(inotify_.get(), buf, sizeof(buf));
    if (n <= 0) return;  // EAGAIN: drained
    for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(struct inotify_event)) <= n;) {
      struct inotify_event ev;
      memcpy(&ev, buf + off, sizeof(ev));
      if (ev.mask & IN_Q_OVERFLOW) fired->overflow = true;
      if (ev.wd >= 0) fired->wds.push_back(ev.wd);
      off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev.len);
    }
  }
}

KernelEvents::Fired KernelEvents::Wait(const std::vector<int>& poll_fds, int mounts_fd,
                                       int timeout_ms) {
  std::vector<struct pollfd> fds;
  fds.reserve(poll_fds.size() + 3);
  fds.push_back({inotify_.get(), POLLIN, 0});
  fds.push_back({wake_.get(), POLLIN, 0});
  // mountinfo is always readable: only POLLPRI (with POLLERR) says that
  // the table changed. A negative fd is skipped by poll().
  fds.push_back({mounts_fd, POLLPRI, 0});
  constexpr size_t kFirstPollFd = 3;
  for (int fd : poll_fds) fds.push_back({fd, POLLIN, 0});
  Fired fired;
  int n = poll(fds.data(), fds.size(), timeout_ms);
  if (n <= 0) return fired;  // timeout, or EINTR
  if (fds[0].revents != 0) DrainInotify(&fired);
  if (fds[1].revents != 0) {
    fired.woken = true;
    uint64_t count;
    ssize_t r = read(wake_.get(), &count, sizeof(count));
    (void)r;
  }
  if ((fds[2].revents & (POLLPRI | POLLERR)) != 0) fired.mounts = true;
  for (size_t i = kFirstPollFd; i < fds.size(); ++i) {
    if (fds[i].revents != 0) fired.poll_fds.push_back(fds[i].fd);
  }
  return fired;
}

}  // namespace ipclock
