// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The registry, not the semaphore, says who holds a permit: a process holds
// one exactly while its slot is kHolding, and the free permits are the
// capacity minus the kHolding slots, counted afresh each time. A permit is
// taken by marking our slot, and given back by clearing it, under the robust
// mutex, each as one store. So a process killed at any instant leaves the
// slots consistent: either it holds (and a reclaimer clears its slot once it
// is gone) or it does not. Hence the robust mutex needs no repair when its
// owner dies (EOWNERDEAD): nothing is derived from a count it may have left
// half-updated.
//
// The semaphore only wakes waiters: a release or a reclaim posts it after
// the slot was cleared, a waiter that took a post re-checks the slots. Its
// value follows the free permits (an acquisition takes a post, a release
// gives one) but is a hint: a process killed between clearing its slot and
// posting, or a waiter killed after taking a post, leaves it one short. A
// waiter never sleeps longer than a slice before it looks at the slots, so
// a lost post costs at most that slice, never a permit.

#include "stores/posix_semaphore_registry.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/errors.h"
#include "platform/proc_pid.h"
#include "platform/process_id.h"

namespace ipclock {

namespace {

constexpr uint32_t kMagic = 0x69706331;  // "ipc1"
// Registries vanishing under one attach before we call it a livelock.
constexpr int kMaxReopens = 64;

enum SlotState : uint32_t {
  kFree = 0,
  kAttached = 1,
  kHolding = 2,
};

int FlockRetry(int fd, int op) {
  for (;;) {
    if (flock(fd, op) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

}  // namespace

struct RegistrySlot {
  int32_t pid;
  uint32_t state;
  uint64_t start_time;
};

struct RegistryPage {
  uint32_t magic;
  uint32_t permits;
  uint64_t pid_namespace;
  // Permits given back from dead holders that no new holder has been told
  // about yet.
  uint32_t orphans;
  uint32_t reserved;
  pthread_mutex_t mu;
  RegistrySlot slots[kRegistrySlots];
};

absl::Status SemaphoreRegistry::Error(int err, absl::string_view what) const {
  return ErrnoError(err, describe_, resource_, what);
}

// Runs under flock, on a fresh (size 0) or half-initialized registry. Any
// semaphore of that name is a leftover whose permits nobody accounts for
// (its registry was deleted, or its creator died before writing the magic
// number): it is replaced, not trusted.
absl::Status SemaphoreRegistry::Initialize(mode_t mode, uint32_t permits) {
  memset(page_, 0, sizeof(RegistryPage));
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  int err = pthread_mutex_init(&page_->mu, &attr);
  pthread_mutexattr_destroy(&attr);
  if (err != 0) return Error(err, "pthread_mutex_init (registry)");
  page_->permits = permits;
  page_->pid_namespace = PidNamespaceId();
  sem_unlink(names_.semaphore.c_str());
  sem_ = sem_open(names_.semaphore.c_str(), O_CREAT | O_EXCL, mode, permits);
  if (sem_ == SEM_FAILED) {
    return Error(errno, absl::StrCat("sem_open ", names_.semaphore));
  }
  // sem_open's mode is cut by the umask; the configured mode is a promise to
  // other users, so set it exactly.
  std::string path = absl::StrCat("/dev/shm/sem.", names_.semaphore.substr(1));
  chmod(path.c_str(), mode);
  __atomic_store_n(&page_->magic, kMagic, __ATOMIC_RELEASE);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SemaphoreRegistry>> SemaphoreRegistry::Attach(
    const Names& names, mode_t mode, uint32_t permits,
    absl::string_view describe, absl::string_view resource) {
  std::unique_ptr<SemaphoreRegistry> r(new SemaphoreRegistry());
  r->names_ = names;
  r->describe_ = std::string(describe);
  r->resource_ = std::string(resource);
  const char* reg = names.registry.c_str();
  for (int attempt = 0; attempt < kMaxReopens; ++attempt) {
    int fd = shm_open(reg, O_RDWR | O_CREAT | O_EXCL, mode);
    if (fd >= 0) {
      fchmod(fd, mode);  // as above: the umask must not narrow it
    } else if (errno == EEXIST) {
      fd = shm_open(reg, O_RDWR, 0);
      if (fd < 0 && errno == ENOENT) continue;  // removed in between
    }
    if (fd < 0) return r->Error(errno, absl::StrCat("shm_open ", names.registry));
    r->fd_.reset(fd);
    if (int err = FlockRetry(fd, LOCK_EX); err != 0) {
      return r->Error(err, absl::StrCat("flock ", names.registry));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) return r->Error(errno, absl::StrCat("fstat ", names.registry));
    if (sb.st_nlink == 0) {
      // The last user removed it between our open and our flock; the name
      // may already belong to a newer registry.
      r->fd_.reset();
      continue;
    }
    const bool fresh = sb.st_size == 0;
    if (fresh && ftruncate(fd, sizeof(RegistryPage)) != 0) {
      return r->Error(errno, absl::StrCat("ftruncate ", names.registry));
    }
    if (!fresh && sb.st_size != static_cast<off_t>(sizeof(RegistryPage))) {
      return StoreError(absl::StatusCode::kFailedPrecondition, describe, resource,
                        absl::StrCat("/dev/shm", names.registry, " is ", sb.st_size,
                                     " bytes, not an ipclock registry of ",
                                     sizeof(RegistryPage)));
    }
    void* map = mmap(nullptr, sizeof(RegistryPage), PROT_READ | PROT_WRITE,
                     MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return r->Error(errno, absl::StrCat("mmap ", names.registry));
    r->page_ = static_cast<RegistryPage*>(map);
    if (__atomic_load_n(&r->page_->magic, __ATOMIC_ACQUIRE) != kMagic) {
      if (absl::Status s = r->Initialize(mode, permits); !s.ok()) return s;
    } else {
      if (r->page_->pid_namespace != PidNamespaceId()) {
        return StoreError(absl::StatusCode::kFailedPrecondition, describe, resource,
                          "the semaphore's registry was made in another pid "
                          "namespace, whose pids this process cannot check");
      }
      if (r->page_->permits != permits) {
        return StoreError(
            absl::StatusCode::kInvalidArgument, describe, resource,
            absl::StrCat("permits=", permits, " but the processes already using ",
                         names.semaphore, " made it with permits=",
                         r->page_->permits));
      }
      r->sem_ = sem_open(names.semaphore.c_str(), 0);
      if (r->sem_ == SEM_FAILED) {
        int err = errno;
        if (err == ENOENT && r->AbandonedByDetach()) {
          // A last user died between its two unlinks (see Detach): we hold
          // the flock, nobody else is attached, so finish its removal.
          shm_unlink(reg);
          r->fd_.reset();
          munmap(r->page_, sizeof(RegistryPage));
          r->page_ = nullptr;
          continue;
        }
        if (err == ENOENT) {
          return StoreError(absl::StatusCode::kFailedPrecondition, describe, resource,
                            absl::StrCat(names.semaphore, " was deleted while its "
                                         "registry is in use; refusing to make a "
                                         "second lock"));
        }
        return r->Error(err, absl::StrCat("sem_open ", names.semaphore));
      }
    }
    if (absl::Status s = r->LockPage(); !s.ok()) return s;
    r->ReclaimDeadLocked();
    for (uint32_t i = 0; i < kRegistrySlots; ++i) {
      RegistrySlot& slot = r->page_->slots[i];
      if (slot.state != kFree) continue;
      // pid and start time before the state: a slot that is not free
      // always names a process.
      slot.pid = CurrentPid();
      slot.start_time = CurrentProcessStartTime();
      __atomic_store_n(&slot.state, kAttached, __ATOMIC_RELEASE);
      r->slot_ = static_cast<int>(i);
      break;
    }
    r->UnlockPage();
    FlockRetry(fd, LOCK_UN);
    if (r->slot_ < 0) {
      return StoreError(absl::StatusCode::kResourceExhausted, describe, resource,
                        absl::StrCat("all ", kRegistrySlots, " registry slots of ",
                                     names.registry, " are taken"));
    }
    return r;
  }
  return StoreError(absl::StatusCode::kUnavailable, describe, resource,
                    absl::StrCat(names.registry, " vanished ", kMaxReopens,
                                 " times while being opened"));
}

SemaphoreRegistry::~SemaphoreRegistry() {
  if (page_ != nullptr) munmap(page_, sizeof(RegistryPage));
  if (sem_ != SEM_FAILED) sem_close(sem_);
}

absl::Status SemaphoreRegistry::LockPage() {
  int err = pthread_mutex_lock(&page_->mu);
  if (err == EOWNERDEAD) {
    // See the top of the file for why nothing needs repair: the free
    // permits are counted from the slots, each written by one store.
    pthread_mutex_consistent(&page_->mu);
    return absl::OkStatus();
  }
  if (err != 0) return Error(err, absl::StrCat("lock the registry ", names_.registry));
  return absl::OkStatus();
}

void SemaphoreRegistry::UnlockPage() { pthread_mutex_unlock(&page_->mu); }

bool SemaphoreRegistry::AbandonedByDetach() {
  // Not ReclaimDeadLocked(): there is no semaphore to post to.
  if (!LockPage().ok()) return false;
  bool anyone = false;
  for (const RegistrySlot& slot : page_->slots) {
    if (slot.state != kFree && !ProcessIsGone(slot.pid, slot.start_time)) anyone = true;
  }
  UnlockPage();
  return !anyone;
}

void SemaphoreRegistry::ReclaimDeadLocked() {
  const pid_t self = CurrentPid();
  for (RegistrySlot& slot : page_->slots) {
    if (slot.state == kFree || slot.pid == self) continue;
    if (!ProcessIsGone(slot.pid, slot.start_time)) continue;
    const bool held = slot.state == kHolding;
    __atomic_store_n(&slot.state, kFree, __ATOMIC_RELEASE);
    slot.pid = 0;
    if (held) {
      ++page_->orphans;
      sem_post(sem_);  // wakes a waiter for the permit just freed
    }
  }
}

uint32_t SemaphoreRegistry::FreePermitsLocked() const {
  uint32_t holding = 0;
  for (const RegistrySlot& slot : page_->slots) {
    if (slot.state == kHolding) ++holding;
  }
  return holding >= page_->permits ? 0 : page_->permits - holding;
}

absl::StatusOr<bool> SemaphoreRegistry::TryAcquire(bool woken, bool* previous_owner_died) {
  if (holding_) return true;
  if (absl::Status s = LockPage(); !s.ok()) return s;
  uint32_t free = FreePermitsLocked();
  if (free == 0) {
    // A permit may be stuck with a dead holder. Only now: reading /proc for
    // every attached process is what an uncontended acquisition must not
    // pay.
    ReclaimDeadLocked();
    free = FreePermitsLocked();
  }
  if (free == 0) {
    UnlockPage();
    // A post we took (`woken`) is dropped: it was for a permit someone took
    // before us, and its releaser posts again.
    return false;
  }
  // This single store is the acquisition (see the top of the file).
  __atomic_store_n(&page_->slots[slot_].state, kHolding, __ATOMIC_RELEASE);
  holding_ = true;
  *previous_owner_died = page_->orphans > 0;
  if (page_->orphans > 0) --page_->orphans;
  UnlockPage();
  // Take the post that stands for this permit, so that the semaphore keeps
  // following the free permits and does not wake waiters for nothing. None
  // there (lost, or in the hands of a waking waiter, who then finds no
  // permit and drops it) is fine: it is only a hint. sem_trywait makes no
  // system call.
  if (!woken) sem_trywait(sem_);
  return true;
}

absl::Status SemaphoreRegistry::ReleasePermit() {
  if (!holding_) return absl::OkStatus();
  if (absl::Status s = LockPage(); !s.ok()) return s;
  __atomic_store_n(&page_->slots[slot_].state, kAttached, __ATOMIC_RELEASE);
  holding_ = false;
  UnlockPage();
  // After the slot is cleared, so a waiter woken by it finds the permit. A
  // death in between loses only this wake-up (see the top of the file).
  if (sem_post(sem_) != 0) {
    return Error(errno, absl::StrCat("sem_post ", names_.semaphore));
  }
  return absl::OkStatus();
}

bool SemaphoreRegistry::StillLinked() const {
  struct stat sb;
  return fstat(fd_.get(), &sb) == 0 && sb.st_nlink > 0;
}

// Caveat: removal races with attachers, and flock settles it. An attacher
// opens the registry, then takes the flock, then checks that the file is
// still linked; we unlink only under the same flock and only when no slot
// is taken. So an attacher either got its slot before we looked (and we
// keep the pair) or finds its file unlinked and starts over on a new pair.
absl::Status SemaphoreRegistry::Detach() {
  absl::Status result = ReleasePermit();
  if (int err = FlockRetry(fd_.get(), LOCK_EX); err != 0) {
    return Error(err, absl::StrCat("flock ", names_.registry));
  }
  bool anyone_left = true;
  if (absl::Status s = LockPage(); s.ok()) {
    page_->slots[slot_].state = kFree;
    page_->slots[slot_].pid = 0;
    slot_ = -1;
    ReclaimDeadLocked();
    anyone_left = false;
    for (const RegistrySlot& slot : page_->slots) {
      if (slot.state != kFree) anyone_left = true;
    }
    UnlockPage();
  } else if (result.ok()) {
    result = s;
  }
  // A registry already unlinked by someone else: its names may belong to a
  // newer pair now, which is not ours to remove. The semaphore goes first,
  // while the registry still stands and we hold its flock: unlinking the
  // registry first let a newcomer make a new pair in between, whose fresh
  // semaphore we then unlinked (tools/torture caught it). A death between
  // the two leaves a registry without a semaphore and without users, which
  // the next Attach() finishes removing.
  if (!anyone_left && StillLinked()) {
    sem_unlink(names_.semaphore.c_str());
    shm_unlink(names_.registry.c_str());
  }
  FlockRetry(fd_.get(), LOCK_UN);
  return result;
}

absl::StatusOr<RegistrySnapshot> ReadRegistrySnapshot(const std::string& registry_name) {
  const std::string describe = "posix-semaphore";
  const std::string path = absl::StrCat("/dev/shm", registry_name);
  ScopedFd fd(shm_open(registry_name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0));
  if (!fd.valid()) return ErrnoError(errno, describe, "", absl::StrCat("shm_open ", path));
  struct stat sb;
  if (fstat(fd.get(), &sb) != 0) {
    return ErrnoError(errno, describe, "", absl::StrCat("fstat ", path));
  }
  if (sb.st_size != static_cast<off_t>(sizeof(RegistryPage))) {
    return StoreError(absl::StatusCode::kFailedPrecondition, describe, "",
                      absl::StrCat(path, " is ", sb.st_size,
                                   " bytes, not an ipclock registry of ",
                                   sizeof(RegistryPage)));
  }
  void* map = mmap(nullptr, sizeof(RegistryPage), PROT_READ, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) return ErrnoError(errno, describe, "", absl::StrCat("mmap ", path));
  const auto* page = static_cast<const RegistryPage*>(map);
  absl::StatusOr<RegistrySnapshot> result;
  if (__atomic_load_n(&page->magic, __ATOMIC_ACQUIRE) != kMagic) {
    result = StoreError(absl::StatusCode::kFailedPrecondition, describe, "",
                        absl::StrCat(path, " is not an initialized registry"));
  } else {
    RegistrySnapshot snap;
    snap.permits = page->permits;
    snap.pid_namespace = page->pid_namespace;
    for (const RegistrySlot& slot : page->slots) {
      // The state first: a slot that is not free always names a process
      // (see Attach).
      const uint32_t state = __atomic_load_n(&slot.state, __ATOMIC_ACQUIRE);
      if (state == kFree) continue;
      RegistrySnapshot::Attached a;
      a.pid = __atomic_load_n(&slot.pid, __ATOMIC_RELAXED);
      a.start_time = __atomic_load_n(&slot.start_time, __ATOMIC_RELAXED);
      a.holding = state == kHolding;
      snap.attached.push_back(a);
    }
    result = std::move(snap);
  }
  munmap(map, sizeof(RegistryPage));
  return result;
}

}  // namespace ipclock
