// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/shm/wait_mark.h"

#include <sys/types.h>

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include "platform/files.h"
#include "platform/process_id.h"
#include "platform/shm_mapping.h"

namespace ipclock {

namespace {

// Byte (index + 1) * 2^33 + since * 2: an index above 0 keeps byte 0 and the
// segment's own bytes clear of marks, and the even offsets keep two marks
// of one lock, a second apart, from touching (the kernel would merge them
// into one lock of two bytes).
constexpr int kIndexShift = 33;

uint64_t MarkOffset(uint32_t index, uint32_t since) {
  return (static_cast<uint64_t>(index) + 1) << kIndexShift | static_cast<uint64_t>(since) << 1;
}

// The marks this process holds, counted per byte of each file. Made anew
// in a forked child (its pid differs): the child holds none of its
// parent's record locks, and a thread of the parent may have held the
// mutex at the fork.
struct Marks {
  pid_t pid = 0;
  std::mutex mu;
  std::map<std::pair<int, uint64_t>, int> count;
  // The parent's, left as it was but reachable (no leak to report).
  Marks* replaced = nullptr;
};

Marks& ThisProcessMarks() {
  static std::atomic<Marks*> marks{nullptr};
  Marks* m = marks.load(std::memory_order_acquire);
  const pid_t pid = CurrentPid();
  while (m == nullptr || m->pid != pid) {
    // The one it replaces is left as it is (see above).
    auto* fresh = new Marks;
    fresh->pid = pid;
    fresh->replaced = m;
    if (marks.compare_exchange_strong(m, fresh, std::memory_order_acq_rel)) return *fresh;
    delete fresh;
  }
  return *m;
}

}  // namespace

WaitMark::WaitMark(int fd, uint32_t index)
    : fd_(fd), offset_(MarkOffset(index, static_cast<uint32_t>(WallClockSeconds()))) {
  Marks& marks = ThisProcessMarks();
  std::lock_guard<std::mutex> hold(marks.mu);
  if (marks.count[{fd_, offset_}]++ == 0) (void)SetByteRecordLock(fd_, offset_, true);
}

WaitMark::~WaitMark() {
  Marks& marks = ThisProcessMarks();
  std::lock_guard<std::mutex> hold(marks.mu);
  auto it = marks.count.find({fd_, offset_});
  // Missing after a fork between the two (the child has none to drop).
  if (it == marks.count.end()) return;
  if (--it->second == 0) {
    marks.count.erase(it);
    (void)SetByteRecordLock(fd_, offset_, false);
  }
}

std::optional<WaitMarkInfo> ReadWaitMark(uint64_t offset) {
  const uint64_t index_plus_one = offset >> kIndexShift;
  if ((offset & 1) != 0 || index_plus_one == 0 || index_plus_one > kWaitMarkLocks) {
    return std::nullopt;
  }
  WaitMarkInfo info;
  info.index = static_cast<uint32_t>(index_plus_one - 1);
  info.since = static_cast<int64_t>((offset >> 1) & 0xffffffffu);
  return info;
}

}  // namespace ipclock
