// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/robust_mutex.h"

#include <time.h>

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "platform/sleep.h"

namespace ipclock {

namespace {

#if defined(__SANITIZE_THREAD__)
#define IPCLOCK_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IPCLOCK_TSAN_BUILD 1
#endif
#endif
#ifdef IPCLOCK_TSAN_BUILD
constexpr bool kTimedLocksInvisibleToTsan = true;
#else
constexpr bool kTimedLocksInvisibleToTsan = false;
#endif

// Set once glibc or the kernel refused CLOCK_MONOTONIC for a PI mutex. Only
// PI mutexes answer a valid monotonic timeout with EINVAL.
std::atomic<bool> g_pi_needs_realtime{false};

int PollUntil(pthread_mutex_t* mu, MonotonicDeadline deadline) {
  for (;;) {
    const int rc = pthread_mutex_trylock(mu);
    if (rc != EBUSY || deadline.has_passed()) return rc;
    MonotonicSleepFor(absl::Microseconds(200));
  }
}

// A PI mutex on a kernel or glibc without FUTEX_LOCK_PI2: the remaining
// time re-based onto the wall clock (see the header).
int RealtimeLock(pthread_mutex_t* mu, MonotonicDeadline deadline) {
  const int64_t left = deadline.nanos() - MonotonicNowNanos();
  if (left <= 0) return pthread_mutex_trylock(mu);
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return errno;
  const int64_t at = static_cast<int64_t>(ts.tv_nsec) + left % 1'000'000'000;
  ts.tv_sec += static_cast<time_t>(left / 1'000'000'000 + at / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(at % 1'000'000'000);
  return pthread_mutex_timedlock(mu, &ts);
}

int LockUntil(pthread_mutex_t* mu, MonotonicDeadline deadline) {
  if (deadline == MonotonicDeadline::Past()) return pthread_mutex_trylock(mu);
  if (deadline.is_never()) return pthread_mutex_lock(mu);
  if (kTimedLocksInvisibleToTsan) return PollUntil(mu, deadline);
  if (!g_pi_needs_realtime.load(std::memory_order_relaxed)) {
    const struct timespec ts = deadline.ToTimespec();
    const int rc = pthread_mutex_clocklock(mu, CLOCK_MONOTONIC, &ts);
    if (rc != EINVAL) return rc;
    // Either a PI mutex on an older pair, or memory that is no mutex: the
    // realtime wait below tells them apart by failing again.
    g_pi_needs_realtime.store(true, std::memory_order_relaxed);
  }
  return RealtimeLock(mu, deadline);
}

}  // namespace

int RobustMutexInit(pthread_mutex_t* mu, const RobustMutexOptions& options) {
  if (int err = TakeFault(FaultPoint::kMutexInit); err != 0) return err;
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc != 0) return rc;
  rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  if (rc == 0) rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  if (rc == 0 && options.error_check) {
    rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  }
  if (rc == 0 && options.priority_inheritance) {
    rc = pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
  }
  if (rc == 0) rc = pthread_mutex_init(mu, &attr);
  const int destroyed = pthread_mutexattr_destroy(&attr);
  return rc != 0 ? rc : destroyed;
}

int RobustMutexLock(pthread_mutex_t* mu, MonotonicDeadline deadline) {
  if (int err = TakeFault(FaultPoint::kMutexLock); err != 0) return err;
  const int rc = LockUntil(mu, deadline);
  return rc == ETIMEDOUT ? EBUSY : rc;
}

int RobustMutexMarkConsistent(pthread_mutex_t* mu) {
  if (int err = TakeFault(FaultPoint::kMutexLock); err != 0) return err;
  return pthread_mutex_consistent(mu);
}

}  // namespace ipclock
