// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Robust, process-shared pthread mutexes kept in shared memory: how ipclock
// sets one up, locks it by a deadline, takes it over from an owner that
// died, and unlocks it. Every store that keeps a mutex in a shared mapping
// goes through here.
//
//   RobustMutexOptions options;  // error-checking, no priority inheritance
//   if (int err = RobustMutexInit(&page->mu, options); err != 0) ...
//
//   int rc = RobustMutexLock(&page->mu, MonotonicDeadline::Never());
//   if (rc == EOWNERDEAD) {
//     // Held now, but the last owner died holding it: put right what the
//     // mutex guards first, then
//     rc = RobustMutexMarkConsistent(&page->mu);
//   }
//   if (rc != 0) return ErrnoError(rc, ...);  // not held
//   ...
//   if (int err = RobustMutexUnlock(&page->mu); err != 0) ...
//
// Every function returns 0 or an errno value and asks platform/faults.h
// first (kMutexInit for RobustMutexInit, kMutexLock for the others), so
// tests can make any of them fail.
//
// Caveats, each with the rule that deals with it:
//   * Owner death. When a holder dies (kill -9, a crash, a thread that exits
//     holding it) the kernel hands the mutex to the next locker with
//     EOWNERDEAD. That locker holds it and must call
//     RobustMutexMarkConsistent() before it unlocks: a mutex unlocked while
//     inconsistent becomes ENOTRECOVERABLE for every process, for good.
//     Repair what the mutex guards before marking it consistent: a locker
//     that dies while repairing then leaves EOWNERDEAD to the next one.
//   * The owner thread. Only the thread that locked a mutex may unlock it
//     (glibc answers others with EPERM and changes nothing). After fork()
//     the child holds none of its parent's mutexes.
//   * Mappings. Each thread's robust list holds the addresses of the
//     mutexes it holds, in this process's address space. Never unmap a
//     mapping while a thread of this process holds a mutex in it: at that
//     thread's exit the kernel would write to whatever is mapped there by
//     then. The mutex must live in MAP_SHARED memory.
//   * Priority inheritance. PI mutexes sleep in FUTEX_LOCK_PI, which took
//     only CLOCK_REALTIME timeouts before Linux 5.14 (FUTEX_LOCK_PI2, used
//     by glibc 2.35 and later). Where CLOCK_MONOTONIC is refused (EINVAL),
//     a timed wait sleeps until a CLOCK_REALTIME time computed from the
//     remaining timeout, so a step of the wall clock during the wait
//     shortens or stretches it.
//   * ThreadSanitizer. GCC 12's TSan runtime does not intercept
//     pthread_mutex_clocklock, and its timedlock interceptor does not record
//     an EOWNERDEAD acquisition, so TSan would see an unlock of a mutex it
//     never saw locked. TSan builds (tests only) wait with trylock every
//     200 us until the deadline; other builds never poll.
//   * A process that can write the mapping can break a mutex (hold it
//     forever, make it unrecoverable). The calls then fail or wait until
//     their deadline.

#ifndef IPCLOCK_PLATFORM_ROBUST_MUTEX_H_
#define IPCLOCK_PLATFORM_ROBUST_MUTEX_H_

#include <errno.h>
#include <pthread.h>

#include "platform/monotonic_deadline.h"
#include "platform/faults.h"

namespace ipclock {

struct RobustMutexOptions {
  // PTHREAD_PRIO_INHERIT: a waiter lends its priority to the holder.
  bool priority_inheritance = false;
  // PTHREAD_MUTEX_ERRORCHECK: the owner thread locking it again gets EDEADLK
  // at once instead of waiting for itself forever.
  bool error_check = true;
};

// Initializes `mu`, which must lie in MAP_SHARED memory that no process uses
// as a mutex yet, as a robust process-shared mutex. 0 or the errno.
[[nodiscard]] int RobustMutexInit(pthread_mutex_t* mu,
                                  const RobustMutexOptions& options);

// Locks `mu`, waiting until `deadline` (MonotonicDeadline::Past(): one try;
// MonotonicDeadline::Never(): no timeout). Returns
//   0                held;
//   EOWNERDEAD       held, but its last owner died holding it (see above);
//   EBUSY            another owner still held it at the deadline;
//   EDEADLK          this thread holds it already (error-checking mutexes);
//   ENOTRECOVERABLE  nobody can lock it any more;
// or another errno (EINVAL for memory that is not such a mutex).
[[nodiscard]] int RobustMutexLock(pthread_mutex_t* mu, MonotonicDeadline deadline);

// RobustMutexLock(mu, MonotonicDeadline::Past()), inline for the fast path.
[[nodiscard]] inline int RobustMutexTryLock(pthread_mutex_t* mu) {
  if (int err = TakeFault(FaultPoint::kMutexLock); err != 0) return err;
  return pthread_mutex_trylock(mu);
}

// Marks a mutex taken with EOWNERDEAD consistent again. 0, or EINVAL if it
// was not (then it must not be unlocked: see above).
[[nodiscard]] int RobustMutexMarkConsistent(pthread_mutex_t* mu);

// Unlocks `mu`. 0, or EPERM if this thread does not hold it (nothing
// changes then).
[[nodiscard]] inline int RobustMutexUnlock(pthread_mutex_t* mu) {
  if (int err = TakeFault(FaultPoint::kMutexLock); err != 0) return err;
  return pthread_mutex_unlock(mu);
}

// The calling thread's handle, for the owner checks that must come before
// a release touches anything: pthread_self() reads the thread pointer,
// without the system call of gettid() or the TLS lookup of a cached TID.
// The handle of a thread that exited goes to a later thread, and a forked
// child's thread has its parent's: check the futex word's owner
// (mutex_futex.h) and the PID too.
inline pthread_t CurrentThread() { return pthread_self(); }
inline bool SameThread(pthread_t a, pthread_t b) { return pthread_equal(a, b) != 0; }

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_ROBUST_MUTEX_H_
