// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The registry, not the semaphore, says who holds a permit
// (stores/posix_semaphore/posix_semaphore_page.h). The semaphore only wakes waiters: a
// release or a reclaim posts it after the permit was given back, a waiter
// that took a post tries again. Its value follows the free permits (an
// acquisition takes a post, a release gives one) but is a hint: a process
// killed between giving its permit back and posting, or a waiter killed
// after taking a post, leaves it one short. A waiter never sleeps longer
// than a slice before it looks at the registry, so a lost post costs at
// most that slice, never a permit.

#include "stores/posix_semaphore/posix_semaphore_registry.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/store_errors.h"
#include "platform/coarse_clock.h"
#include "platform/errors.h"
#include "platform/files.h"
#include "platform/proc_pid.h"
#include "platform/process_id.h"
#include "platform/shm_mapping.h"
#include "stores/posix_semaphore/posix_semaphore_page.h"

namespace ipclock {

namespace {

// Registries vanishing under one attach before we call it a livelock.
constexpr int kMaxReopens = 64;

}  // namespace

absl::Status SemaphoreRegistry::Error(int err, absl::string_view what) const {
  return ErrnoError(err, describe_, resource_, what);
}

absl::Status SemaphoreRegistry::Lost(absl::string_view what) const {
  return LostError(describe_, resource_, what);
}

// The new registry is complete before it has a name, and its flock is taken
// before it has one too: an attacher that opens it as soon as it is linked
// waits in flock() until its semaphore exists.
absl::StatusOr<bool> SemaphoreRegistry::Create(mode_t mode, uint32_t permits, bool fair) {
  const std::string& reg = names_.registry;
  ScopedFd fd;
  if (int err = CreateUnlinkedShmFile(mode, &fd)) {
    return Error(err, absl::StrCat("create ", ShmPath(reg)));
  }
  if (int err = TruncateFd(fd.get(), sizeof(RegistryPage))) {
    return Error(err, absl::StrCat("ftruncate ", ShmPath(reg)));
  }
  void* map = nullptr;
  if (int err = MapShared(fd.get(), sizeof(RegistryPage), true, &map)) {
    return Error(err, absl::StrCat("mmap ", ShmPath(reg)));
  }
  page_ = static_cast<RegistryPage*>(map);
  // A fresh file reads as zeros: free slots, a free owner word.
  if (int err = InitRegistryMutex(&page_->mu)) {
    return Error(err, "pthread_mutex_init (registry)");
  }
  page_->permits = permits;
  page_->flags = fair ? kRegistryFair : 0;
  page_->pid_namespace = PidNamespaceId();
  SharedStore(&page_->magic, kRegistryMagic);
  if (int err = FlockFdRestarting(fd.get(), LOCK_EX)) {
    return Error(err, absl::StrCat("flock ", ShmPath(reg)));
  }
  if (int err = LinkShmFile(fd.get(), reg)) {
    if (err == EEXIST) return false;
    return Error(err, absl::StrCat("link ", ShmPath(reg)));
  }
  struct stat st;
  // Below, a failure takes the new registry back (ours, linked, and we
  // hold its flock); a failed unlink then leaves a registry without a
  // semaphore and without users, which the next attacher removes. The
  // error reported is the first one.
  if (int err = FstatFd(fd.get(), &st)) {
    (void)UnlinkShmFile(reg);
    return Error(err, absl::StrCat("fstat ", ShmPath(reg)));
  }
  fd_ = std::move(fd);
  registry_id_ = FileIdOf(st);
  permits_ = permits;
  fair_ = fair;
  // Any semaphore of that name is a leftover whose permits nobody accounts
  // for (its registry was deleted): it is replaced, not trusted.
  if (int err = CreateNamedSem(names_.semaphore, mode, permits, &sem_)) {
    (void)UnlinkShmFile(reg);
    return Error(err, absl::StrCat("create ", SemPath(names_.semaphore)));
  }
  sem_id_ = sem_.id;
  SharedStore(&page_->sem_dev, sem_id_.dev);
  SharedStore(&page_->sem_ino, sem_id_.ino);
  return true;
}

// Maps an existing registry (flocked) and checks it: its size, its magic
// number, its pid namespace; then opens its semaphore.
absl::Status SemaphoreRegistry::MapAndCheck(const struct stat& st) {
  const std::string path = ShmPath(names_.registry);
  if (st.st_size != static_cast<off_t>(sizeof(RegistryPage))) {
    return MisuseError(describe_, resource_,
                       absl::StrCat(path, " is ", st.st_size,
                                    " bytes, not an ipclock registry of ",
                                    sizeof(RegistryPage)));
  }
  void* map = nullptr;
  if (int err = MapShared(fd_.get(), sizeof(RegistryPage), true, &map)) {
    return Error(err, absl::StrCat("mmap ", path));
  }
  page_ = static_cast<RegistryPage*>(map);
  if (SharedLoad(&page_->magic) != kRegistryMagic) {
    return MisuseError(describe_, resource_,
                       absl::StrCat(path, " is not an initialized registry of this ipclock "
                                          "version (an older ipclock, or another program, "
                                          "made it)"));
  }
  if (SharedLoad(&page_->pid_namespace) != PidNamespaceId()) {
    return MisuseError(describe_, resource_,
                       "the semaphore's registry was made in another pid "
                       "namespace, whose pids this process cannot check");
  }
  permits_ = SharedLoad(&page_->permits);
  fair_ = (SharedLoad(&page_->flags) & kRegistryFair) != 0;
  sem_id_.dev = SharedLoad(&page_->sem_dev);
  sem_id_.ino = SharedLoad(&page_->sem_ino);
  return absl::OkStatus();
}

absl::Status SemaphoreRegistry::TakeSlot() {
  if (absl::Status s = LockPage(); !s.ok()) return s;
  ReclaimDeadLocked();
  for (uint32_t i = 0; i < kRegistrySlots; ++i) {
    RegistrySlot& slot = page_->slots[i];
    if (SharedLoad(&slot.state) != kSlotFree) continue;
    // pid and start time before the state: a slot that is not free always
    // names a process.
    SharedStore(&slot.pid, static_cast<int32_t>(attach_pid_));
    SharedStore(&slot.start_time, start_time_);
    SharedStore(&slot.waiting_since, int64_t{0});
    SharedStore(&slot.state, static_cast<uint32_t>(kSlotAttached));
    slot_ = static_cast<int>(i);
    break;
  }
  UnlockPage();
  if (slot_ < 0) {
    return OutOfResourcesError(describe_, resource_,
                               absl::StrCat("all ", kRegistrySlots, " registry slots of ",
                                            names_.registry, " are taken"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SemaphoreRegistry>> SemaphoreRegistry::Attach(
    const Names& names, mode_t mode, uint32_t permits, bool fair,
    absl::string_view describe, absl::string_view resource) {
  for (int attempt = 0; attempt < kMaxReopens; ++attempt) {
    std::unique_ptr<SemaphoreRegistry> r(new SemaphoreRegistry());
    r->names_ = names;
    r->describe_ = std::string(describe);
    r->resource_ = std::string(resource);
    r->attach_pid_ = CurrentPid();
    r->start_time_ = CurrentProcessStartTime();
    const std::string path = ShmPath(names.registry);
    struct stat st;
    int err = OpenShmFile(names.registry, true, &r->fd_, &st);
    bool created = false;
    if (err == ENOENT) {
      absl::StatusOr<bool> made = r->Create(mode, permits, fair);
      if (!made.ok()) return made.status();
      if (!*made) continue;  // someone else linked one first: open theirs
      created = true;
    } else if (err != 0) {
      return r->Error(err, absl::StrCat("open ", path));
    } else {
      // A file of the wrong type: a configuration fault (ipclock/errors.h).
      if (!S_ISREG(st.st_mode)) {
        return ConfigurationError(describe, resource,
                                  absl::StrCat(path, " is not a regular file"));
      }
      // Blocks while a creator makes the semaphore (see Create()).
      if (int e = FlockFdRestarting(r->fd_.get(), LOCK_EX)) {
        return r->Error(e, absl::StrCat("flock ", path));
      }
      if (int e = FstatFd(r->fd_.get(), &st)) return r->Error(e, absl::StrCat("fstat ", path));
      if (st.st_nlink == 0) continue;  // removed before our flock: the name is another's now
      r->registry_id_ = FileIdOf(st);
      if (absl::Status s = r->MapAndCheck(st); !s.ok()) return s;
      err = r->sem_id_.ino == 0 ? ENOENT : OpenNamedSem(names.semaphore, true, &r->sem_);
      if (err == 0 && r->sem_.id != r->sem_id_) err = ENOENT;  // not the one made with it
      if (err == ENOENT) {
        if (r->NobodyAlive()) {
          // Its creator, or a last user in Detach(), died half-way: we hold
          // the flock and nobody is attached, so finish the removal.
          if (r->StillLinked()) (void)UnlinkShmFile(names.registry);
          continue;
        }
        return MisuseError(describe, resource,
                           absl::StrCat(SemPath(names.semaphore),
                                        " was deleted or replaced while its registry is "
                                        "in use; refusing to make a second lock"));
      }
      if (err == EBADFD) {
        return ConfigurationError(describe, resource,
                                  absl::StrCat(SemPath(names.semaphore), " is not a semaphore"));
      }
      if (err != 0) return r->Error(err, absl::StrCat("open ", SemPath(names.semaphore)));
    }
    if (r->permits_ != permits) {
      return ConfigurationError(
          describe, resource,
          absl::StrCat("permits=", permits, " but the processes already using ",
                       names.semaphore, " made it with permits=", r->permits_));
    }
    if (r->fair_ != fair) {
      // A process outside the queue would take the permit out of turn.
      return ConfigurationError(describe, resource,
                                absl::StrCat("fair=", fair ? "true" : "false",
                                             " but the processes already using ", names.semaphore,
                                             " made it with fair=", r->fair_ ? "true" : "false",
                                             "; every user of a resource must agree on fair"));
    }
    absl::Status slot = r->TakeSlot();
    if (!slot.ok() && created && r->StillLinked()) {
      (void)UnlinkShmFile(names.registry);  // nobody else can be in it
    }
    (void)FlockFdRestarting(r->fd_.get(), LOCK_UN);  // closing the descriptor would drop it too
    if (!slot.ok()) return slot;
    r->link_checked_at_ = CoarseMonotonicNanos();
    return r;
  }
  return TransientError(describe, resource,
                        absl::StrCat(names.registry, " vanished ", kMaxReopens,
                                     " times while being opened"));
}

SemaphoreRegistry::~SemaphoreRegistry() {
  if (page_ != nullptr) Unmap(page_, sizeof(RegistryPage));
  CloseNamedSem(&sem_);
}

absl::Status SemaphoreRegistry::LockPage() {
  bool owner_died = false;
  if (int err = LockRegistryMutex(&page_->mu, &owner_died)) {
    return Error(err, absl::StrCat("lock the registry ", names_.registry));
  }
  if (owner_died) {
    // A holder of the mutex died, maybe between marking a slot and counting
    // it: count again. The owner word needs nothing (one store each way).
    uint32_t holding = 0;
    for (const RegistrySlot& slot : page_->slots) {
      if (SharedLoad(&slot.state) == kSlotHolding) ++holding;
    }
    SharedStore(&page_->holders, holding);
  }
  return absl::OkStatus();
}

void SemaphoreRegistry::UnlockPage() { UnlockRegistryMutex(&page_->mu); }

bool SemaphoreRegistry::NobodyAlive() {
  // Not ReclaimDeadLocked(): there may be no semaphore to post to.
  if (!LockPage().ok()) return false;
  bool anyone = false;
  for (const RegistrySlot& slot : page_->slots) {
    if (SharedLoad(&slot.state) == kSlotFree) continue;
    const pid_t pid = SharedLoad(&slot.pid);
    if (!ProcessIsGone(pid, SharedLoad(&slot.start_time))) anyone = true;
  }
  UnlockPage();
  return !anyone;
}

// Under the mutex. For permits == 1: the holder named by the owner word, if
// its process is gone, loses the permit (kOwnerDied) and its slot. A value
// no ipclock process writes (a scribbler's) counts as a dead holder too:
// the lock would otherwise stay taken for good. True if a permit was freed.
bool SemaphoreRegistry::ReclaimOwnerLocked() {
  uint32_t owner = SharedLoad(&page_->owner);
  if (owner == kOwnerFree || owner == kOwnerDied) return false;
  if (owner <= kRegistrySlots) {
    RegistrySlot& slot = page_->slots[owner - 1];
    const pid_t pid = SharedLoad(&slot.pid);
    const uint64_t start = SharedLoad(&slot.start_time);
    if (SharedLoad(&slot.state) != kSlotFree && !ProcessIsGone(pid, start)) return false;
  }
  // The slot cannot be reused meanwhile (slots are taken and freed under
  // the mutex); only its holder, releasing, could change the word, and it
  // is gone.
  if (!__atomic_compare_exchange_n(&page_->owner, &owner, kOwnerDied, false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    return false;
  }
  if (owner <= kRegistrySlots) {
    RegistrySlot& slot = page_->slots[owner - 1];
    SharedStore(&slot.state, static_cast<uint32_t>(kSlotFree));
    SharedStore(&slot.pid, 0);
  }
  return true;
}

// Under the mutex: frees the slots of processes that are gone. A slot that
// held a permit frees it, and a post wakes a waiter for it.
void SemaphoreRegistry::ReclaimDeadLocked() {
  bool freed = permits_ == 1 && ReclaimOwnerLocked();
  // The holder's slot stays while the owner word names it, whatever its
  // process looks like by now: freed and reused, it would make the word
  // name a live stranger and the lock would stay taken for good.
  const uint32_t owner = permits_ == 1 ? SharedLoad(&page_->owner) : kOwnerFree;
  const pid_t self = CurrentPid();
  uint32_t reclaimed = 0;
  for (uint32_t i = 0; i < kRegistrySlots; ++i) {
    RegistrySlot& slot = page_->slots[i];
    const uint32_t state = SharedLoad(&slot.state);
    const pid_t pid = SharedLoad(&slot.pid);
    if (state == kSlotFree || pid == self || owner == i + 1) continue;
    if (!ProcessIsGone(pid, SharedLoad(&slot.start_time))) continue;
    SharedStore(&slot.state, static_cast<uint32_t>(kSlotFree));
    SharedStore(&slot.pid, 0);
    if (state == kSlotHolding && permits_ > 1) ++reclaimed;
  }
  if (reclaimed > 0) {
    const uint32_t holders = SharedLoad(&page_->holders);
    SharedStore(&page_->holders, holders > reclaimed ? holders - reclaimed : 0u);
    SharedStore(&page_->orphans, SharedLoad(&page_->orphans) + reclaimed);
    freed = true;
  }
  // A failed post only delays a waiter to the end of its slice.
  for (uint32_t i = 0; freed && sem_.sem != nullptr && i < (reclaimed > 0 ? reclaimed : 1); ++i) {
    (void)SemPost(sem_.sem);
  }
}

bool SemaphoreRegistry::DeathUntoldLocked() const {
  return permits_ == 1 ? SharedLoad(&page_->owner) == kOwnerDied
                       : SharedLoad(&page_->orphans) > 0;
}

uint32_t SemaphoreRegistry::FreePermitsLocked() const {
  const uint32_t holders = SharedLoad(&page_->holders);
  return holders >= permits_ ? 0 : permits_ - holders;
}

absl::StatusOr<bool> SemaphoreRegistry::TryAcquire(bool woken, bool* previous_owner_died) {
  *previous_owner_died = false;
  if (holding_) return true;
  if (permits_ == 1) {
    const uint32_t mine = static_cast<uint32_t>(slot_) + 1;
    for (int pass = 0; pass < 2; ++pass) {
      uint32_t seen = SharedLoad(&page_->owner);
      if ((seen == kOwnerFree || seen == kOwnerDied) &&
          __atomic_compare_exchange_n(&page_->owner, &seen, mine, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        // This swap is the acquisition (see posix_semaphore_page.h).
        holding_ = true;
        SharedStore(&page_->slots[slot_].held_since, WallClockSeconds());
        *previous_owner_died = seen == kOwnerDied;
        // Take the post that stands for this permit, so that the semaphore
        // keeps following the free permits; none there (lost, or taken by a
        // waking waiter, who then finds no permit) is fine: it is a hint.
        if (!woken) (void)SemTryWait(sem_.sem);
        return true;
      }
      if (pass == 1) break;
      // Taken. Its holder may be dead: look only now, since reading /proc
      // is what an uncontended acquisition must not pay.
      if (absl::Status s = LockPage(); !s.ok()) return s;
      const bool freed = ReclaimOwnerLocked();
      UnlockPage();
      if (!freed) break;
    }
    // A post we took (`woken`) is dropped: it was for a permit someone took
    // before us, and its releaser posts again.
    return false;
  }
  if (absl::Status s = LockPage(); !s.ok()) return s;
  uint32_t free = FreePermitsLocked();
  if (free == 0) {
    ReclaimDeadLocked();
    free = FreePermitsLocked();
  }
  if (free == 0) {
    UnlockPage();
    return false;
  }
  RegistrySlot& slot = page_->slots[slot_];
  if (SharedLoad(&slot.pid) != attach_pid_) {
    UnlockPage();
    return MisuseError(describe_, resource_,
                       absl::StrCat("the registry ", ShmPath(names_.registry),
                                    " no longer names this process in its slot "
                                    "(it was rewritten)"));
  }
  SharedStore(&slot.held_since, WallClockSeconds());
  SharedStore(&slot.state, static_cast<uint32_t>(kSlotHolding));
  SharedStore(&page_->holders, SharedLoad(&page_->holders) + 1);
  holding_ = true;
  const uint32_t orphans = SharedLoad(&page_->orphans);
  if (orphans > 0) {
    *previous_owner_died = true;
    SharedStore(&page_->orphans, orphans - 1);
  }
  UnlockPage();
  if (!woken) (void)SemTryWait(sem_.sem);
  return true;
}

void SemaphoreRegistry::MarkWaiting(bool waiting) {
  SharedStore(&page_->slots[slot_].waiting_since, waiting ? WallClockSeconds() : int64_t{0});
}

absl::Status SemaphoreRegistry::ReleasePermit(bool died) {
  if (!holding_) return absl::OkStatus();
  holding_ = false;
  absl::Status result;
  if (permits_ == 1) {
    uint32_t mine = static_cast<uint32_t>(slot_) + 1;
    if (!__atomic_compare_exchange_n(&page_->owner, &mine, died ? kOwnerDied : kOwnerFree, false,
                                     __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
      result = Lost(absl::StrCat("the registry ", ShmPath(names_.registry),
                                 " no longer names this process as the holder "
                                 "(it was rewritten while the lock was held)"));
    }
  } else {
    if (absl::Status s = LockPage(); !s.ok()) return s;
    RegistrySlot& slot = page_->slots[slot_];
    if (SharedLoad(&slot.state) != kSlotHolding || SharedLoad(&slot.pid) != attach_pid_) {
      result = Lost(absl::StrCat("the registry ", ShmPath(names_.registry),
                                 " no longer names this process as a holder "
                                 "(it was rewritten while the lock was held)"));
    } else {
      SharedStore(&slot.state, static_cast<uint32_t>(kSlotAttached));
      const uint32_t holders = SharedLoad(&page_->holders);
      SharedStore(&page_->holders, holders > 0 ? holders - 1 : 0u);
      if (died) SharedStore(&page_->orphans, SharedLoad(&page_->orphans) + 1);
    }
    UnlockPage();
  }
  if (!result.ok()) return result;
  // After the permit is back, so a waiter woken by it finds the permit. A
  // death in between loses only this wake-up (see the top of the file).
  if (int err = SemPost(sem_.sem)) {
    return Error(err, absl::StrCat("sem_post ", SemPath(names_.semaphore)));
  }
  return absl::OkStatus();
}

TicketQueueShared* SemaphoreRegistry::queue() const {
  return fair_ ? &page_->queue : nullptr;
}

ScopedFd SemaphoreRegistry::OpenSemaphoreToWatch() const {
  ScopedFd fd;
  ShmFileId id;
  if (OpenNamedSemPath(names_.semaphore, &fd, &id) != 0 || id != sem_id_) return ScopedFd();
  return fd;
}

bool SemaphoreRegistry::SlotStillOurs() const {
  const RegistrySlot& slot = page_->slots[slot_];
  return SharedLoad(&slot.pid) == attach_pid_ && SharedLoad(&slot.state) != kSlotFree;
}

bool SemaphoreRegistry::StillLinked() const {
  struct stat st;
  return FstatFd(fd_.get(), &st) == 0 && st.st_nlink > 0;
}

absl::Status SemaphoreRegistry::CheckHeld() const {
  const std::string reg_path = ShmPath(names_.registry);
  struct stat st;
  if (int err = FstatFd(fd_.get(), &st)) return Error(err, absl::StrCat("fstat ", reg_path));
  if (st.st_nlink == 0) {
    return Lost(absl::StrCat("the registry ", reg_path, " was deleted while the lock was held"));
  }
  int err = StatShmName(names_.registry, &st);
  if (err == 0 && FileIdOf(st) != registry_id_) err = ENOENT;
  if (err == ENOENT) {
    return Lost(absl::StrCat("the registry ", reg_path,
                             " was replaced while the lock was held"));
  }
  if (err != 0) return Error(err, absl::StrCat("lstat ", reg_path));
  const std::string sem_path = SemPath(names_.semaphore);
  err = StatSemName(names_.semaphore, &st);
  if (err == ENOENT || (err == 0 && FileIdOf(st) != sem_id_)) {
    return Lost(absl::StrCat("the semaphore ", sem_path,
                             err == 0 ? " was replaced" : " was deleted",
                             " while the lock was held"));
  }
  if (err != 0) return Error(err, absl::StrCat("lstat ", sem_path));
  const RegistrySlot& slot = page_->slots[slot_];
  const bool ours = SharedLoad(&slot.pid) == attach_pid_ &&
                    SharedLoad(&slot.start_time) == start_time_ &&
                    SharedLoad(&slot.state) != kSlotFree;
  const bool holds = permits_ == 1
                         ? SharedLoad(&page_->owner) == static_cast<uint32_t>(slot_) + 1
                         : SharedLoad(&slot.state) == kSlotHolding;
  if (!ours || (holding_ && !holds)) {
    return Lost(absl::StrCat("the registry ", reg_path,
                             " no longer names this process as the holder"));
  }
  return absl::OkStatus();
}

// Caveat: removal races with attachers, and flock settles it. An attacher
// opens the registry, then takes the flock, then checks that the file is
// still linked; we unlink only under the same flock and only when no slot
// is taken. So an attacher either got its slot before we looked (and we
// keep the pair) or finds its file unlinked and starts over on a new pair.
absl::Status SemaphoreRegistry::Detach() {
  absl::Status result = ReleasePermit();
  if (int err = FlockFdRestarting(fd_.get(), LOCK_EX)) {
    return Error(err, absl::StrCat("flock ", ShmPath(names_.registry)));
  }
  bool anyone_left = true;
  if (absl::Status s = LockPage(); s.ok()) {
    RegistrySlot& slot = page_->slots[slot_];
    if (SharedLoad(&slot.pid) == attach_pid_) {
      SharedStore(&slot.state, static_cast<uint32_t>(kSlotFree));
      SharedStore(&slot.pid, 0);
    }
    slot_ = -1;
    ReclaimDeadLocked();
    // A holder that died and whose death no holder has been told of yet
    // keeps the pair: the next user learns of it from the registry, which
    // a new pair would not have.
    anyone_left = DeathUntoldLocked();
    for (const RegistrySlot& other : page_->slots) {
      if (SharedLoad(&other.state) != kSlotFree) anyone_left = true;
    }
    UnlockPage();
  } else if (result.ok()) {
    result = s;
  }
  // A registry already unlinked by someone else: its names may belong to a
  // newer pair now, which is not ours to remove. The semaphore goes first,
  // while the registry still stands and we hold its flock: unlinking the
  // registry first let a newcomer make a new pair in between, whose fresh
  // semaphore we then unlinked. A death between the two leaves a registry
  // without a semaphore and without users, which the next Attach() removes.
  // An unlink that fails leaves what the next last user, or the next
  // attacher, removes: there is nobody to tell now.
  if (!anyone_left && StillLinked()) {
    struct stat st;
    if (StatSemName(names_.semaphore, &st) == 0 && FileIdOf(st) == sem_id_) {
      (void)UnlinkNamedSem(names_.semaphore);
    }
    (void)UnlinkShmFile(names_.registry);
  }
  (void)FlockFdRestarting(fd_.get(), LOCK_UN);
  return result;
}

}  // namespace ipclock
