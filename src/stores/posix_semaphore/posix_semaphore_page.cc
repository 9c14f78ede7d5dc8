// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The registry page's mutex, and the read-only view of a page that
// `ipclock list` takes.

#include "stores/posix_semaphore/posix_semaphore_page.h"

#include <errno.h>
#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "platform/posix_sem.h"
#include "platform/robust_mutex.h"

namespace ipclock {

int InitRegistryMutex(pthread_mutex_t* mu) {
  RobustMutexOptions options;
  options.error_check = false;
  return RobustMutexInit(mu, options);
}

int LockRegistryMutex(pthread_mutex_t* mu, bool* owner_died) {
  *owner_died = false;
  int err = pthread_mutex_lock(mu);
  if (err == EOWNERDEAD) {
    // Its holder died inside: the caller repairs what the mutex guards.
    *owner_died = true;
    err = RobustMutexMarkConsistent(mu);
  }
  return err;
}

void UnlockRegistryMutex(pthread_mutex_t* mu) {
  // Fails only for a mutex we do not hold (EPERM), which would be a bug.
  (void)pthread_mutex_unlock(mu);
}

absl::StatusOr<RegistrySnapshot> ReadRegistrySnapshot(const std::string& registry_name) {
  const std::string describe = "posix-semaphore";
  const std::string path = ShmPath(registry_name);
  ScopedFd fd;
  struct stat st;
  if (int err = OpenShmFile(registry_name, false, &fd, &st)) {
    return ErrnoError(err, describe, "", absl::StrCat("open ", path));
  }
  if (!S_ISREG(st.st_mode) || st.st_size != static_cast<off_t>(sizeof(RegistryPage))) {
    // A file of the wrong type is a configuration fault (ipclock/errors.h).
    StoreErrorMaker fault = ConfigurationError;
    if (S_ISREG(st.st_mode)) fault = MisuseError;
    return fault(describe, "",
                 absl::StrCat(path, " is not an ipclock registry (",
                              S_ISREG(st.st_mode) ? "its size is wrong" : "not a regular file",
                              ")"));
  }
  void* map = nullptr;
  if (int err = MapShared(fd.get(), sizeof(RegistryPage), false, &map)) {
    return ErrnoError(err, describe, "", absl::StrCat("mmap ", path));
  }
  const auto* page = static_cast<const RegistryPage*>(map);
  absl::StatusOr<RegistrySnapshot> result;
  if (SharedLoad(&page->magic) != kRegistryMagic) {
    result = MisuseError(describe, "",
                         absl::StrCat(path, " is not an initialized registry of this "
                                            "ipclock version"));
  } else {
    RegistrySnapshot snap;
    snap.permits = SharedLoad(&page->permits);
    snap.pid_namespace = SharedLoad(&page->pid_namespace);
    const uint32_t owner = SharedLoad(&page->owner);
    for (uint32_t i = 0; i < kRegistrySlots; ++i) {
      const RegistrySlot& slot = page->slots[i];
      // The state first: a slot that is not free always names a process
      // (see SemaphoreRegistry::TakeSlot()).
      const uint32_t state = SharedLoad(&slot.state);
      if (state == kSlotFree) continue;
      RegistrySnapshot::Attached a;
      a.pid = SharedLoad(&slot.pid);
      a.start_time = SharedLoad(&slot.start_time);
      a.holding = snap.permits == 1 ? owner == i + 1 : state == kSlotHolding;
      if (a.holding) a.held_since = SharedLoad(&slot.held_since);
      a.waiting_since = SharedLoad(&slot.waiting_since);
      snap.attached.push_back(a);
    }
    // The semaphore beside it: "/x.reg" -> "/x".
    constexpr absl::string_view kSuffix = ".reg";
    if (absl::EndsWith(registry_name, kSuffix)) {
      NamedSem sem;
      const std::string sem_name = registry_name.substr(0, registry_name.size() - kSuffix.size());
      if (OpenNamedSem(sem_name, false, &sem) == 0) {
        int value = -1;
        if (SemGetValue(sem.sem, &value) == 0) snap.semaphore_value = value;
        CloseNamedSem(&sem);
      }
    }
    result = std::move(snap);
  }
  Unmap(map, sizeof(RegistryPage));
  return result;
}

}  // namespace ipclock
