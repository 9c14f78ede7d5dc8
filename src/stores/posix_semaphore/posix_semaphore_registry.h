// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The pair of objects behind one resource of the posix-semaphore store: a
// shared-memory registry of the processes attached to it, which says who
// holds a permit (so that the permit of a holder that died can be given
// back), and the named semaphore on which waiters sleep until a permit is
// given back. See include/ipclock/stores/posix_semaphore_store.h for the contract.
//
// Registry layout (shm "/<prefix>.<hex>.reg", stores/posix_semaphore/posix_semaphore_page.h):
// a header (magic, permits, pid namespace, the identity of the semaphore
// made with it, the holder of a mutex-like registry, the count of holders
// and of reclaimed permits not yet reported, whether it is fair), a robust
// process-shared mutex, 256 slots {pid, state, start time, since when it
// holds, since when it waits}, then the queue of a fair registry's waiters.
//
// Creation is atomic: a registry is made and initialized under no name
// (O_TMPFILE) and linked into place complete, with flock(2) held on it until
// its semaphore exists too. A creator that dies before the link leaves
// nothing; one that dies after it leaves a registry without a semaphore and
// without users, which the next attacher removes. Attachment and removal of
// the pair happen under the same flock, which the kernel drops when a
// process dies.

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
#include "platform/posix_sem.h"
#include "platform/scoped_fd.h"

namespace ipclock {

struct RegistryPage;
struct TicketQueueShared;

inline constexpr uint32_t kRegistrySlots = 256;

// One attachment to a resource: a slot in the registry, the mapped page,
// the mapped semaphore. Not thread-safe (one Lock at a time uses it).
class SemaphoreRegistry {
 public:
  struct Names {
    std::string semaphore;  // "/<prefix>.<hex>"
    std::string registry;   // "/<prefix>.<hex>.reg"
  };

  // Opens or creates the pair and takes a slot. `describe` and `resource`
  // are for messages. InvalidArgument when the pair was made with another
  // number of permits or another `fair`, ResourceExhausted when every slot
  // is taken, FailedPrecondition for a file at the registry's name that is
  // not an initialized registry of this version.
  static absl::StatusOr<std::unique_ptr<SemaphoreRegistry>> Attach(
      const Names& names, mode_t mode, uint32_t permits, bool fair,
      absl::string_view describe, absl::string_view resource);

  // Unmaps and closes, leaving the slot as it is: a permit still held stays
  // held until this process dies (a lock kept past its Lock object).
  ~SemaphoreRegistry();
  SemaphoreRegistry(const SemaphoreRegistry&) = delete;
  SemaphoreRegistry& operator=(const SemaphoreRegistry&) = delete;

  sem_t* semaphore() const { return sem_.sem; }
  // The registry's descriptor, for inotify.
  int registry_fd() const { return fd_.get(); }
  // A descriptor of the semaphore, for inotify to see it deleted or
  // replaced; invalid if the name no longer leads to ours (a check then
  // says so).
  ScopedFd OpenSemaphoreToWatch() const;
  uint32_t permits() const { return permits_; }
  // The waiters' queue of a fair registry (its creator asked for `fair`),
  // else null.
  TicketQueueShared* queue() const;
  const std::string& resource() const { return resource_; }
  // The process that took the slot: a forked child must neither use it nor
  // free it.
  pid_t attach_pid() const { return attach_pid_; }
  bool holding() const { return holding_; }

  // Takes a permit if one is free (after reclaiming the permit of a dead
  // holder when none is): true when this attachment now holds one, false
  // when all are held. `woken` says the caller already took a post from the
  // semaphore (sem_clockwait returned 0); otherwise an acquisition takes
  // one if there is one, so the semaphore keeps following the free permits.
  // `*previous_owner_died` says whether the permit came from a dead holder.
  absl::StatusOr<bool> TryAcquire(bool woken, bool* previous_owner_died);
  // Says in our slot, for listings, that this attachment waits since now
  // (`waiting`), or no longer.
  void MarkWaiting(bool waiting);
  // Gives our permit back and posts the semaphore to wake a waiter.
  // Aborted when the registry no longer names us as the holder (the permit
  // was taken from us: the registry was rewritten under us). `died` gives
  // it back as a dead holder's, whose next holder is told (ReleaseAsDead()).
  absl::Status ReleasePermit(bool died = false);
  // Leaves the registry, giving back a permit still held, and removes the
  // pair if nobody else is attached.
  absl::Status Detach();

  // False once our slot names another process (the page was rewritten):
  // the attachment is worthless and must be replaced.
  bool SlotStillOurs() const;
  // False once the registry was unlinked under us (a cleaner, logout): the
  // permit we hold then excludes nobody who attaches later. One fstat.
  bool StillLinked() const;
  // The exact check of a held permit: the registry is still linked and
  // still the file at its name, the semaphore is still the one made with
  // it, and our slot still names us as a holder. Aborted saying what was
  // lost. An fstat, two lstats and a few loads.
  absl::Status CheckHeld() const;

  // When the link was last checked (CoarseMonotonicNanos()); the store's
  // rule for when to check again is in its header.
  int64_t link_checked_at() const { return link_checked_at_; }
  void set_link_checked_at(int64_t t) { link_checked_at_ = t; }

 private:
  SemaphoreRegistry() = default;
  absl::Status Error(int err, absl::string_view what) const;
  absl::Status Lost(absl::string_view what) const;
  // Under the flock: the registry at our name is missing. Makes one,
  // links it, maps it and makes its semaphore. EEXIST (OK status, false):
  // someone else made one first.
  absl::StatusOr<bool> Create(mode_t mode, uint32_t permits, bool fair);
  absl::Status OpenExisting();
  absl::Status MapAndCheck(const struct stat& st);
  absl::Status TakeSlot();
  absl::Status LockPage();
  void UnlockPage();
  void ReclaimDeadLocked();
  bool ReclaimOwnerLocked();
  uint32_t FreePermitsLocked() const;
  // Under the mutex, after ReclaimDeadLocked(): a holder died and no later
  // holder has been told yet.
  bool DeathUntoldLocked() const;
  // Under the flock, for a registry whose semaphore is missing: true when
  // no live process is attached, i.e. its creator or a Detach() died
  // half-way.
  bool NobodyAlive();

  Names names_;
  std::string describe_;
  std::string resource_;
  ScopedFd fd_;
  ShmFileId registry_id_;
  RegistryPage* page_ = nullptr;
  NamedSem sem_;
  // Private copies of the header, read once: a writer racing us in shared
  // memory cannot make us use two values of one field.
  uint32_t permits_ = 0;
  bool fair_ = false;
  ShmFileId sem_id_;
  int slot_ = -1;
  uint64_t start_time_ = 0;
  pid_t attach_pid_ = 0;
  bool holding_ = false;
  int64_t link_checked_at_ = 0;
};

// A registry as another process (`ipclock list`) reads it.
struct RegistrySnapshot {
  struct Attached {
    pid_t pid = 0;
    uint64_t start_time = 0;  // clock ticks since boot, as /proc has it
    bool holding = false;     // holds a permit
    int64_t held_since = 0;   // when it acquired, if holding (Unix seconds)
    int64_t waiting_since = 0;  // since when it waits; 0 if it does not
  };
  uint32_t permits = 0;
  uint64_t pid_namespace = 0;
  std::vector<Attached> attached;
  // The semaphore's value (the free permits, as a hint), or -1 if it could
  // not be read.
  int semaphore_value = -1;
};

// Reads the registry `registry_name` ("/<prefix>.<hex>.reg") without
// attaching, locking or changing it: a snapshot that may be torn for a slot
// changing at that instant. NotFound if there is none, FailedPrecondition
// for a file that is not an initialized registry (a FIFO planted there is
// refused, not waited on).
absl::StatusOr<RegistrySnapshot> ReadRegistrySnapshot(const std::string& registry_name);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSIX_SEMAPHORE_REGISTRY_H_
