// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Waits that `ipclock list` can see, on stores whose waiters sleep where
// nothing says who they are (a robust mutex's futex knows only that someone
// waits). A waiter marks its wait with a shared POSIX record lock on one
// byte of a file of the store (the shm segment), at an offset that says
// which lock it waits for and since when. /proc/locks then names the
// waiter by its pid, and the kernel takes the mark away when the process
// dies, however it dies: nothing is left to clean up, and nothing in the
// store's shared memory changes.
//
// Caveats:
//   * Record locks belong to the process. Threads that wait for the same
//     lock from the same second share one mark (counted here; the last to
//     stop waiting takes it away), so a listing counts processes.
//   * Any close(2) of the file in the process drops all its marks (fcntl's
//     rule): while another store object of the same segment is destroyed,
//     a wait already marked stops showing until its next wait.
//   * A mark that cannot be made (no lock memory, ENOLCK) is skipped: it is
//     there for listings only, and the wait goes on without it.
//   * A store may keep a mark past the wait (the shm store does, until its
//     release, so that the fcntl delays no handoff): a listing then leaves
//     out the marks of the lock's holder, and with them a wait by another
//     thread of the holder's process.

#ifndef IPCLOCK_STORES_WAIT_MARK_H_
#define IPCLOCK_STORES_WAIT_MARK_H_

#include <cstdint>
#include <optional>

namespace ipclock {

// The most locks a file's marks tell apart (shm capacities stay below).
inline constexpr uint32_t kWaitMarkLocks = 1u << 22;

class WaitMark {
 public:
  // Marks a wait, begun now, for lock `index` (< kWaitMarkLocks) of the
  // file open as `fd`, which must stay open until the mark is destroyed.
  WaitMark(int fd, uint32_t index);
  ~WaitMark();
  WaitMark(const WaitMark&) = delete;
  WaitMark& operator=(const WaitMark&) = delete;

 private:
  const int fd_;
  const uint64_t offset_;
};

// What the mark at byte `offset` says: the lock it waits for and when the
// wait began (Unix seconds). nullopt for a byte no mark uses.
struct WaitMarkInfo {
  uint32_t index = 0;
  int64_t since = 0;
};
std::optional<WaitMarkInfo> ReadWaitMark(uint64_t offset);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_WAIT_MARK_H_
