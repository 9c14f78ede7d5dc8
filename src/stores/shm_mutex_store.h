// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The shm store's segment layout, for the store and for tests that need to
// forge a segment. Everything here is shared between processes: change any
// field and bump kShmLayoutVersion.

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
#include "core/store_registry.h"
#include "ipclock/shm_store.h"

namespace ipclock {

// "ipclkshm" read as a little-endian word.
inline constexpr uint64_t kShmMagic = 0x6d68736b6c637069ULL;
inline constexpr uint32_t kShmLayoutVersion = 1;
inline constexpr size_t kShmInlineName = 200;
inline constexpr uint32_t kShmMaxCapacity = 65536;

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
  uint8_t creation_id[16];
  // Under table_mu:
  uint32_t max_displacement;  // farthest any bound slot lies from its home
  uint32_t reserved;
  uint64_t fence_floor;       // highest fence of any slot ever rebound
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

// One resource. The first cache line is what a lock and a release touch.
struct alignas(64) ShmSlot {
  pthread_mutex_t mu;
  // Under mu:
  uint64_t fence;
  int32_t holder_pid;  // set while held; non-zero on entry = holder died
  uint32_t reserved;
  // Changed only with both table_mu and mu held, so a holder of mu may
  // read it without table_mu.
  uint64_t generation;  // bumped whenever the slot is bound to a name
  // Under table_mu:
  uint32_t state;       // ShmSlotState
  uint32_t name_kind;   // ShmNameKind
  uint32_t name_len;    // length of the full name
  uint32_t reserved2;
  uint64_t name_hash;
  // Keys of live (or dead) processes that cached this slot; a hint only.
  std::atomic<uint32_t> refs;
  uint8_t name[kShmInlineName];
};

// Builds a store from a parsed `shm://NAME[?mode=&capacity=&pi=]` DSN.
absl::StatusOr<std::shared_ptr<Store>> ShmStoreFromDsn(
    Dsn& dsn, const StoreOptions& store_options);

// The registry's entry (core/store_registry.h).
extern const StoreDriver kShmDriver;

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SHM_MUTEX_STORE_H_
