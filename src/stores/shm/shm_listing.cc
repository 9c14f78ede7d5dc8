// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ListShmSlots(): the bound slots of a segment, read through a read-only
// mapping without taking any mutex (`ipclock list`). Every value is read
// once and bounded before use: the segment may be written by anyone who
// can open it, including while we read.

#include <fcntl.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/hashing.h"
#include "ipclock/stores/shm_store.h"
#include "platform/errors.h"
#include "platform/proc_locks.h"
#include "platform/proc_pid.h"
#include "platform/scoped_fd.h"
#include "platform/shm_mapping.h"
#include "stores/shm/shm_mutex_store.h"
#include "stores/shm/shm_segment.h"
#include "stores/shm/wait_mark.h"

namespace ipclock {

namespace {

// A slot being rebound while we copy it could show one name's bytes under
// another's length; its generation is odd or has moved on when that
// happens, so a copy is kept only between two equal even generations. A
// slot that stays unstable (a binder that died half-way holds no name) is
// left out.
constexpr int kListCopyAttempts = 3;

// Copies slot `i` if it is bound; false otherwise.
bool CopySlot(const ShmSlot& slot, uint32_t i, ShmSlotInfo* out) {
  for (int attempt = 0; attempt < kListCopyAttempts; ++attempt) {
    const uint64_t generation = slot.generation.load(std::memory_order_acquire);
    if ((generation & 1) != 0) continue;
    // Acquire loads keep the second load of the generation after them
    // (see shm_slot_table.cc, Compare()).
    if (slot.state.load(std::memory_order_acquire) != kShmSlotBound) return false;
    const uint32_t kind = slot.name_kind.load(std::memory_order_acquire);
    const uint32_t len = slot.name_len.load(std::memory_order_acquire);
    uint64_t words[kShmNameWords];
    for (size_t w = 0; w < kShmNameWords; ++w) {
      words[w] = slot.name[w].load(std::memory_order_acquire);
    }
    out->index = i;
    out->holder_pid = __atomic_load_n(&slot.holder_pid, __ATOMIC_ACQUIRE);
    out->fence = __atomic_load_n(&slot.fence, __ATOMIC_ACQUIRE);
    out->refs = slot.refs.load(std::memory_order_acquire);
    const uint32_t held_since = __atomic_load_n(&slot.held_since, __ATOMIC_ACQUIRE);
    const int32_t held_since_pid = __atomic_load_n(&slot.held_since_pid, __ATOMIC_ACQUIRE);
    if (out->holder_pid > 0 && held_since_pid == out->holder_pid) out->held_since = held_since;
    if (kind == kShmNameSha256) {
      Sha256Digest digest;
      memcpy(digest.data(), words, digest.size());
      out->name = absl::StrCat("sha256:", ToHex(digest));
    } else {
      out->name.assign(reinterpret_cast<const char*>(words),
                       std::min<size_t>(len, kShmInlineName));
    }
    if (slot.generation.load(std::memory_order_relaxed) == generation) {
      out->holder_alive = out->holder_pid > 0 && !ProcessIsGone(out->holder_pid, 0);
      return true;
    }
  }
  return false;
}

// The waits marked on the segment (wait_mark.h), given to their slots.
// Without /proc/locks the slots have no waiters listed; the rest stands.
void AddWaiters(const ObjectStat& segment, std::vector<ShmSlotInfo>* slots) {
  absl::StatusOr<std::vector<ProcRecordLock>> locks = ReadProcRecordLocks("shm");
  if (!locks.ok()) return;
  for (const ProcRecordLock& l : *locks) {
    if (l.inode != segment.ino || l.major != major(segment.dev) ||
        l.minor != minor(segment.dev) || l.start != l.last || l.write) {
      continue;
    }
    const std::optional<WaitMarkInfo> mark = ReadWaitMark(l.start);
    if (!mark) continue;
    for (ShmSlotInfo& slot : *slots) {
      // A holder keeps its wait's mark until it releases (shm_mutex_store.cc).
      if (slot.index == mark->index && l.pid != slot.holder_pid) {
        slot.waiters.push_back({l.pid, mark->since});
      }
    }
  }
  for (ShmSlotInfo& slot : *slots) {
    std::stable_sort(slot.waiters.begin(), slot.waiters.end(),
                     [](const ShmSlotInfo::Waiter& a, const ShmSlotInfo::Waiter& b) {
                       return a.since < b.since;
                     });
  }
}

}  // namespace

absl::StatusOr<std::vector<ShmSlotInfo>> ListShmSlots(absl::string_view name) {
  if (!ValidShmSegmentName(name)) return BadShmSegmentName(name);
  const ShmNames names(name);
  ScopedFd fd;
  if (int err = ShmOpen(names.shm_name, O_RDONLY, 0, &fd); err != 0) {
    return ErrnoError(err, names.describe, "", absl::StrCat("shm_open ", names.path));
  }
  ObjectStat identity;
  absl::StatusOr<ShmHeaderCopy> header = ReadShmHeader(fd.get(), names, &identity);
  if (!header.ok()) return header.status();
  // Whatever pi setting the segment has is fine for reading it.
  if (absl::Status s = ValidateShmHeader(*header, identity.size, std::nullopt, names);
      !s.ok()) {
    return s;
  }
  const uint32_t capacity = header->capacity;
  SharedMapping mapping;
  if (int err = SharedMapping::Map(fd.get(), ShmSegmentSize(capacity), /*writable=*/false,
                                   &mapping);
      err != 0) {
    return ErrnoError(err, names.describe, "", absl::StrCat("mmap ", names.path));
  }
  const char* base = static_cast<const char*>(mapping.data());
  const auto* index = reinterpret_cast<const std::atomic<uint64_t>*>(base + kShmIndexOffset);
  const auto* slots = reinterpret_cast<const ShmSlot*>(base + ShmSlotsOffset(capacity));
  std::vector<ShmSlotInfo> out;
  std::vector<bool> seen(capacity);
  for (uint32_t i = 0; i < capacity; ++i) {
    const uint64_t entry = index[i].load(std::memory_order_relaxed);
    const uint32_t slot = ShmEntrySlotPlusOne(entry) - 1;
    // Positions that hold no name, and (in a corrupted index) slots that do
    // not exist or were listed already, are left out.
    if (ShmEntryTag(entry) == 0 || slot >= capacity || seen[slot]) continue;
    seen[slot] = true;
    ShmSlotInfo info;
    if (CopySlot(slots[slot], slot, &info)) out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(),
            [](const ShmSlotInfo& a, const ShmSlotInfo& b) { return a.index < b.index; });
  AddWaiters(identity, &out);
  return out;
}

}  // namespace ipclock
