// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// futex(2) and futex_waitv(2), the way async waits use them: on 32-bit words
// that may live in shared memory (so not FUTEX_PRIVATE unless asked), with
// absolute CLOCK_MONOTONIC deadlines.
//
// glibc has no wrappers; these call the system calls directly and return
// errno values instead of setting errno.

#ifndef IPCLOCK_PLATFORM_FUTEX_H_
#define IPCLOCK_PLATFORM_FUTEX_H_

#include <cstdint>

#include "platform/monotonic_deadline.h"

namespace ipclock {

// Sleeps while `*word == expected`, until a FUTEX_WAKE on `word`, a signal,
// or `deadline`. 0 when woken (possibly spuriously), EAGAIN if the word
// already differed, ETIMEDOUT, EINTR, or another errno.
int FutexWaitUntil(uint32_t* word, uint32_t expected, bool shared, MonotonicDeadline deadline);

// Like FutexWaitUntil, but also ends, with ECANCELED, when `*cancel_word`
// (a private word) stops being 0 and is woken; one futex_waitv(2) call, so a
// cancellation that sets the word and wakes it between our check and the
// sleep is never missed. ENOSYS on kernels before 5.16.
int FutexWaitOrCancelUntil(uint32_t* word, uint32_t expected, bool shared,
                           uint32_t* cancel_word, MonotonicDeadline deadline);

// Wakes up to `count` sleepers on `word`. Returns how many were woken, or a
// negative errno.
int FutexWake(uint32_t* word, int count, bool shared);

// FutexWaitUntil for a sleeper that only FutexWakeBits() calls whose `bits`
// share a bit with its own wake (FUTEX_WAIT_BITSET): many sleepers on one
// word, each woken alone. `bits` must not be 0 (EINVAL).
int FutexWaitBitsUntil(uint32_t* word, uint32_t expected, uint32_t bits, bool shared,
                       MonotonicDeadline deadline);

// Wakes up to `count` sleepers on `word` whose bits share one with `bits`
// (FUTEX_WAKE_BITSET). Returns how many were woken, or a negative errno.
int FutexWakeBits(uint32_t* word, int count, uint32_t bits, bool shared);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_FUTEX_H_
