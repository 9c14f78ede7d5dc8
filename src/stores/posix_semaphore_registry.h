// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The pair of objects behind one resource of the posix-semaphore store: a
// shared-memory registry of the processes attached to it, whose slots say
// who holds a permit (so that the permit of a holder that died can be given
// back), and the named semaphore on which waiters sleep until a permit is
// given back. See include/ipclock/posix_semaphore_store.h for the contract.
//
// Registry layout (one page, shm "/<prefix>.<hex>.reg"): a header (magic,
// permits, pid namespace, count of reclaimed permits not yet reported) and
// a robust process-shared mutex, then 256 slots {pid, state, start time}.
// Creation, attachment and removal of the pair happen under flock(2) on the
// registry's descriptor, which the kernel drops when a process dies, so a
// creator killed half-way leaves nothing that blocks the next one.

#ifndef IPCLOCK_STORES_POSIX_SEMAPHORE_REGISTRY_H_
#define IPCLOCK_STORES_POSIX_SEMAPHORE_REGISTRY_H_

#include <semaphore.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "platform/scoped_fd.h"

namespace ipclock {

struct RegistryPage;

inline constexpr uint32_t kRegistrySlots = 256;

// One key's attachment to a resource: a slot in the registry, the mapped
// page, the open semaphore. Not thread-safe (one per key).
class SemaphoreRegistry {
 public:
  struct Names {
    std::string semaphore;  // "/<prefix>.<hex>"
    std::string registry;   // "/<prefix>.<hex>.reg"
  };

  // Opens or creates the pair and takes a slot. `describe` and `resource`
  // are for messages. InvalidArgument when the pair was made with another
  // number of permits, ResourceExhausted when every slot is taken.
  static absl::StatusOr<std::unique_ptr<SemaphoreRegistry>> Attach(
      const Names& names, mode_t mode, uint32_t permits,
      absl::string_view describe, absl::string_view resource);

  // Unmaps and closes, leaving the slot as it is: a permit still held stays
  // held until this process dies (a lock kept past its Lock object).
  ~SemaphoreRegistry();

  sem_t* semaphore() const { return sem_; }

  // Takes a permit if one is free (after reclaiming those of dead holders
  // when none is): true when our slot now holds one, false when all are
  // held. `woken` says the caller already took a post from the semaphore
  // (sem_clockwait returned 0); otherwise an acquisition takes one if
  // there is one, so the semaphore keeps following the free permits.
  // `*previous_owner_died` says whether the permit came from a dead holder.
  absl::StatusOr<bool> TryAcquire(bool woken, bool* previous_owner_died);
  // Gives our permit back: the slot is cleared, then sem_post wakes a
  // waiter.
  absl::Status ReleasePermit();
  // Leaves the registry, giving back a permit still held, and removes the
  // pair if nobody else is attached.
  absl::Status Detach();
  // False once the registry was unlinked under us (a cleaner, logout): the
  // permit we hold then excludes nobody who attaches later.
  bool StillLinked() const;

 private:
  SemaphoreRegistry() = default;
  absl::Status Error(int err, absl::string_view what) const;
  absl::Status LockPage();
  void UnlockPage();
  absl::Status Initialize(mode_t mode, uint32_t permits);
  void ReclaimDeadLocked();
  uint32_t FreePermitsLocked() const;
  // Under the flock, for a registry whose semaphore is gone: true when no
  // live process is attached, i.e. a Detach() died half-way.
  bool AbandonedByDetach();

  Names names_;
  std::string describe_;
  std::string resource_;
  ScopedFd fd_;
  RegistryPage* page_ = nullptr;
  sem_t* sem_ = SEM_FAILED;
  int slot_ = -1;
  bool holding_ = false;
};

// A registry as another process (`ipclock list`) reads it.
struct RegistrySnapshot {
  struct Attached {
    pid_t pid = 0;
    uint64_t start_time = 0;  // clock ticks since boot, as /proc has it
    bool holding = false;     // holds a permit
  };
  uint32_t permits = 0;
  uint64_t pid_namespace = 0;
  std::vector<Attached> attached;
};

// Reads the registry `registry_name` ("/<prefix>.<hex>.reg") without
// attaching, locking or changing it: a snapshot that may be torn for a slot
// changing at that instant. NotFound if there is none, FailedPrecondition
// for a file that is not an initialized registry.
absl::StatusOr<RegistrySnapshot> ReadRegistrySnapshot(const std::string& registry_name);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSIX_SEMAPHORE_REGISTRY_H_
