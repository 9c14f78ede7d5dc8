// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The registry page of the posix-semaphore store, shared by every process
// attached to one resource (stores/posix_semaphore/posix_semaphore_registry.h).
//
// Fairness (kRegistryFair): a process that must wait takes a ticket in
// `queue` and sleeps there until it is first; only the first waiter sleeps
// on the semaphore. Without it, every waiter sleeps on the semaphore and a
// releaser that acquires again usually takes the permit back before the
// waiter it posted for wakes up.
//
// Who holds a permit:
//   * permits == 1: the `owner` word alone, taken with one compare-and-swap
//     from 0 (or kOwnerDied) to our slot + 1 and given back with one from
//     our slot + 1 to 0. A process killed at any instant has either taken
//     it or not, so nothing needs repair, and the reused acquisition and
//     release touch no mutex. A reclaimer (under the mutex) swaps a dead
//     holder's value for kOwnerDied, which the next holder takes with the
//     news.
//   * permits > 1: a slot holds a permit exactly while its state is
//     kHolding, changed under the robust mutex, with `holders` counting
//     them so that an acquisition reads one word instead of 256 slots. A
//     holder of the mutex that dies between the two stores leaves them
//     apart; the next locker gets EOWNERDEAD and counts the slots afresh.
//
// Every process that can write the page can also break the locks in it;
// what must not happen is that such a writer crashes us. So every field is
// read once into a local (or a private copy made at attachment) and checked
// before use: a slot index from `owner` is bounds-checked, counts are
// clamped, no size or offset comes from the page. The robust mutex itself
// cannot be defended that way (glibc keeps list pointers in it): a writer
// that scribbles over it can crash a process that locks it, as with any
// process-shared pthread mutex; the permits == 1 path never locks it while
// the lock is free.

#ifndef IPCLOCK_STORES_POSIX_SEMAPHORE_PAGE_H_
#define IPCLOCK_STORES_POSIX_SEMAPHORE_PAGE_H_

#include <pthread.h>

#include <cstdint>

#include "platform/shared_word.h"
#include "stores/posix_semaphore/posix_semaphore_registry.h"
#include "stores/ticket_queue/ticket_queue.h"

namespace ipclock {

// "ipc4": the layout above. Registries of earlier layouts ("ipc1", "ipc2",
// which had no queue; "ipc3", whose slots did not say since when they hold
// or wait) are refused, not converted: processes of two ipclock versions do
// not share a posix-semaphore resource.
inline constexpr uint32_t kRegistryMagic = 0x69706334;

// `flags`, fixed by the registry's creator.
inline constexpr uint32_t kRegistryFair = 1;  // acquisitions wait in `queue`

// The `owner` word: free, or free after its holder died.
inline constexpr uint32_t kOwnerFree = 0;
inline constexpr uint32_t kOwnerDied = 0xffffffffu;

enum SlotState : uint32_t {
  kSlotFree = 0,
  kSlotAttached = 1,
  kSlotHolding = 2,  // permits > 1 only
};

struct RegistrySlot {
  int32_t pid;
  uint32_t state;
  uint64_t start_time;
  // For `ipclock list` alone, written only by the slot's process: when it
  // last acquired (read while it holds), and since when it waits, 0 while
  // it does not (Unix seconds).
  int64_t held_since;
  int64_t waiting_since;
};

struct RegistryPage {
  uint32_t magic;
  uint32_t permits;
  uint64_t pid_namespace;
  // The semaphore made with this registry (0/0 until its creator made it).
  uint64_t sem_dev;
  uint64_t sem_ino;
  uint32_t owner;    // permits == 1
  uint32_t holders;  // permits > 1, under `mu`
  // Permits given back from dead holders that no new holder has been told
  // about yet (permits > 1, under `mu`).
  uint32_t orphans;
  uint32_t flags;  // kRegistry*
  pthread_mutex_t mu;
  RegistrySlot slots[kRegistrySlots];
  // Waiters of a fair registry take turns here (stores/ticket_queue/ticket_queue.h).
  TicketQueueShared queue;
};


// The registry's robust, process-shared mutex: made once, locked with
// EOWNERDEAD turned into `*owner_died` (and the mutex made consistent).
int InitRegistryMutex(pthread_mutex_t* mu);
int LockRegistryMutex(pthread_mutex_t* mu, bool* owner_died);
void UnlockRegistryMutex(pthread_mutex_t* mu);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSIX_SEMAPHORE_PAGE_H_
