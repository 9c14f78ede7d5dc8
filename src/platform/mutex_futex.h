// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The futex word inside a glibc pthread_mutex_t, so that an async waiter can
// sleep on a robust mutex without a thread blocked in pthread_mutex_lock.
//
// This relies on glibc's layout and protocol, not on POSIX:
//   * the word is `__data.__lock`, the first int of the mutex (checked at
//     compile time below);
//   * for a robust, non-PI mutex it holds the owner's TID (0 when free),
//     FUTEX_OWNER_DIED once the kernel has seen the owner die, and
//     FUTEX_WAITERS while someone may sleep on it; an unlock stores 0 and
//     wakes one sleeper only if FUTEX_WAITERS was set.
// So a sleeper outside glibc must set FUTEX_WAITERS before it sleeps, as
// glibc's own lock does, or no unlock would wake it. And one woken sleeper
// that takes the mutex by trylock (which stores the plain TID) must set
// FUTEX_WAITERS again, as glibc's lock does after a wake: otherwise its
// unlock would not wake the others still asleep. A woken sleeper that does
// not take the mutex passes the wake on. PI mutexes are another protocol
// (the kernel owns the wait queue) and are not supported.
//
// RobustMutexFutexSelfTest() checks the protocol at run time on a fresh
// mutex (its word holds our TID while locked and 0 after); where it fails,
// callers must not use the word.

#ifndef IPCLOCK_PLATFORM_MUTEX_FUTEX_H_
#define IPCLOCK_PLATFORM_MUTEX_FUTEX_H_

#include <pthread.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace ipclock {

// linux/futex.h values of the robust-futex word.
inline constexpr uint32_t kFutexWaitersBit = 0x80000000u;
inline constexpr uint32_t kFutexOwnerDiedBit = 0x40000000u;
inline constexpr uint32_t kFutexTidMask = 0x3fffffffu;

static_assert(offsetof(pthread_mutex_t, __data.__lock) == 0,
              "glibc's mutex futex word (__data.__lock) is expected first");
static_assert(sizeof(static_cast<pthread_mutex_t*>(nullptr)->__data.__lock) ==
                  sizeof(uint32_t),
              "glibc's mutex futex word is expected to be 32 bits");

// The futex word of `mu`.
inline uint32_t* MutexFutexWord(pthread_mutex_t* mu) {
  return reinterpret_cast<uint32_t*>(&mu->__data.__lock);
}

// The TID of the thread that holds `mu`, 0 if none, as the futex word shows
// it: for robust and PI mutexes alike the kernel's protocol keeps the
// owner's TID there (and clears it when the owner dies). A plain read that
// takes nothing, so any thread may ask; meaningful only where
// RobustMutexFutexSelfTest() passed.
inline pid_t MutexOwnerTid(pthread_mutex_t* mu) {
  return static_cast<pid_t>(__atomic_load_n(MutexFutexWord(mu), __ATOMIC_RELAXED) &
                            kFutexTidMask);
}

// OK if glibc's robust mutexes behave as described above on this system;
// FailedPrecondition saying what differed otherwise. Runs once per process.
absl::Status RobustMutexFutexSelfTest();

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_MUTEX_FUTEX_H_
