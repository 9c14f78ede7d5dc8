// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/mutex_futex.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace ipclock {

namespace {

absl::Status RunSelfTest() {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_t mu;
  const int rc = pthread_mutex_init(&mu, &attr);
  pthread_mutexattr_destroy(&attr);
  if (rc != 0) {
    return absl::FailedPreconditionError("ipclock: robust mutex self-test: init failed");
  }
  uint32_t* word = MutexFutexWord(&mu);
  const uint32_t before = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  pthread_mutex_lock(&mu);
  const uint32_t held = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  pthread_mutex_unlock(&mu);
  const uint32_t after = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  pthread_mutex_destroy(&mu);
  const uint32_t tid = static_cast<uint32_t>(gettid());
  if (before != 0 || (held & kFutexTidMask) != tid || after != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ipclock: this C library's robust mutexes do not keep the owner's TID "
        "in their first word (free ",
        before, ", held ", held, " for TID ", tid, ", released ", after,
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
