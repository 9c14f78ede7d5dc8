// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/mutex_futex.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace ipclock {

namespace {

// Calls pthread directly, not through robust_mutex.h: its answer is kept
// for the life of the process, so an injected fault (platform/faults.h)
// must not decide it.
absl::Status RunSelfTest() {
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc == 0) rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  if (rc == 0) rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  if (rc == 0) rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_t mu;
  if (rc == 0) rc = pthread_mutex_init(&mu, &attr);
  if (pthread_mutexattr_destroy(&attr) != 0 && rc == 0) rc = EINVAL;
  if (rc != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ipclock: robust mutex self-test: pthread_mutex_init failed: ", strerror(rc)));
  }
  uint32_t* word = MutexFutexWord(&mu);
  const uint32_t before = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  const int locked = pthread_mutex_lock(&mu);
  const uint32_t held = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  const int unlocked = locked == 0 ? pthread_mutex_unlock(&mu) : locked;
  const uint32_t after = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  const int destroyed = pthread_mutex_destroy(&mu);
  const uint32_t tid = static_cast<uint32_t>(gettid());
  if (locked != 0 || unlocked != 0 || destroyed != 0 || before != 0 ||
      (held & kFutexTidMask) != tid || after != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ipclock: this C library's robust mutexes do not keep the owner's TID "
        "in their first word (free ",
        before, ", held ", held, " for TID ", tid, ", released ", after,
        "; lock/unlock/destroy returned ", locked, "/", unlocked, "/", destroyed,
        "); async waits on them need a thread each"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RobustMutexFutexSelfTest() {
  static const absl::Status* const result = new absl::Status(RunSelfTest());
  return *result;
}

}  // namespace ipclock
