// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The shm store's segment layout, for the store's files and for tests that
// forge or corrupt a segment. Everything here is shared between processes,
// and every process that can open the segment can write any byte of it: the
// store reads it all as hostile (values are checked where they are used,
// header fields are copied once and checked, offsets come from this build's
// constants, never from the segment). Change any field and bump
// kShmLayoutVersion.
//
//   offset 0                    ShmHeader
//   kShmIndexOffset             `capacity` index entries (std::atomic<uint64_t>),
//                               the hash table of names: ShmIndexEntry(tag,
//                               1 + slot), tag 0 while no name is bound at
//                               that position, slot 0 before the position
//                               first got one; padded to a cache line
//   ShmSlotsOffset(capacity)    `capacity` ShmSlots, handed out in the order
//                               index positions are first bound
//
// How a name finds its slot: shm_slot_table.h.

#ifndef IPCLOCK_STORES_SHM_MUTEX_STORE_H_
#define IPCLOCK_STORES_SHM_MUTEX_STORE_H_

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/stores/shm_store.h"

namespace ipclock {

// "ipclkshm" read as a little-endian word.
inline constexpr uint64_t kShmMagic = 0x6d68736b6c637069ULL;
// 1: up to 65,536 slots, each at its hash position. 2: an index of tags
// and slot numbers, slots handed out in order, slot names as atomic words,
// a generation that is odd during a rebind, up to kShmMaxCapacity slots.
inline constexpr uint32_t kShmLayoutVersion = 2;
inline constexpr size_t kShmInlineName = 200;
inline constexpr uint32_t kShmMaxCapacity = 1u << 22;

inline constexpr uint32_t kShmFlagPriorityInheritance = 1;

// The segment starts with one header.
struct alignas(64) ShmHeader {
  // Written last, with release ordering, by the process that initialized the
  // segment: nothing else is read before it reads kShmMagic.
  std::atomic<uint64_t> magic;
  uint32_t version;
  uint32_t word_size;     // sizeof(void*) of the creator
  uint32_t header_size;   // sizeof(ShmHeader)
  uint32_t slot_size;     // sizeof(ShmSlot)
  uint32_t mutex_size;    // sizeof(pthread_mutex_t)
  uint32_t capacity;
  uint32_t flags;         // kShmFlag*
  int32_t creator_pid;
  // Written under table_mu; read without it by lookups, as a bound to scan.
  std::atomic<uint32_t> max_displacement;  // farthest a bound position lies from its home
  // Under table_mu:
  uint32_t rebinding;     // 1 + index position being rebound, 0 if none
  uint64_t fence_floor;   // highest fence of any slot ever rebound
  uint32_t next_unused;   // slots [0, next_unused) went to index positions
  uint32_t reserved;
  alignas(64) pthread_mutex_t table_mu;
};

enum ShmSlotState : uint32_t {
  kShmSlotFree = 0,   // never bound, or its binder died mid-rebind
  kShmSlotBound = 1,  // name fields are valid
};

enum ShmNameKind : uint32_t {
  kShmNameInline = 0,  // `name` holds the whole name
  kShmNameSha256 = 1,  // `name` holds its SHA-256 (32 bytes)
};

inline constexpr size_t kShmNameWords = kShmInlineName / 8;
static_assert(kShmInlineName % 8 == 0, "names are stored as whole words");

// One resource. The first cache line (on x86-64) is what an acquisition and
// a release touch; the second is what a lookup compares.
struct alignas(64) ShmSlot {
  pthread_mutex_t mu;
  // Under mu:
  uint64_t fence;
  int32_t holder_pid;  // set while held; non-zero on entry = holder died
  // Keys (in any process) that cached this slot; a hint that steers reuse.
  std::atomic<uint32_t> refs;
  // A sequence count of the binding: even while the slot is stable, odd
  // while it is being rebound (or after a binder died half-way). Changed
  // only with both table_mu and mu held, so a holder of mu may read it
  // without table_mu, and a lookup without table_mu reads the name fields
  // between two reads of it.
  std::atomic<uint64_t> generation;
  // Written under table_mu, between the two changes of `generation`:
  std::atomic<uint32_t> state;       // ShmSlotState
  std::atomic<uint32_t> name_kind;   // ShmNameKind
  std::atomic<uint32_t> name_len;    // length of the full name
  uint32_t reserved;
  std::atomic<uint64_t> name_hash;
  // The stored name's bytes in memory order, zero after its end.
  std::atomic<uint64_t> name[kShmNameWords];
  // For `ipclock list` alone, in what was the slot's padding (older builds
  // write neither and find them 0): the wall clock's second at which the
  // holder acquired, and its pid, written under mu after holder_pid. A
  // listing trusts the second only beside the same pid as holder_pid, so
  // that a holder of an older build is not given its predecessor's time.
  uint32_t held_since;
  int32_t held_since_pid;
};

// An index entry: a bound position's tag (never 0) and 1 + its slot.
inline uint32_t ShmTag(uint64_t name_hash) {
  return static_cast<uint32_t>(name_hash >> 32) | 1u;
}
inline uint64_t ShmIndexEntry(uint32_t tag, uint32_t slot_plus_one) {
  return static_cast<uint64_t>(slot_plus_one) << 32 | tag;
}
inline uint32_t ShmEntryTag(uint64_t entry) { return static_cast<uint32_t>(entry); }
inline uint32_t ShmEntrySlotPlusOne(uint64_t entry) {
  return static_cast<uint32_t>(entry >> 32);
}

inline constexpr size_t kShmIndexOffset = sizeof(ShmHeader);

inline constexpr uint64_t ShmSlotsOffset(uint32_t capacity) {
  return kShmIndexOffset + (static_cast<uint64_t>(capacity) * 8 + 63) / 64 * 64;
}

inline constexpr uint64_t ShmSegmentSize(uint32_t capacity) {
  return ShmSlotsOffset(capacity) + static_cast<uint64_t>(capacity) * sizeof(ShmSlot);
}

// Its driver and entry (core/store_entry.h), which the registry lists. The
// driver builds a store from a parsed `shm://NAME[?mode=&capacity=&pi=]` DSN.
IPCLOCK_STORE_ENTRY(Shm, Scope::kLocal, IpcKind::kPosixShm, "", 1, "shm");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SHM_MUTEX_STORE_H_
