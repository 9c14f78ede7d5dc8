// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// flock(2) with a deadline.
//
// flock has no timed form. Polling with LOCK_NB would either burn CPU or add
// up to a poll interval of latency to every hand-over, so a timed wait here is
// a plain blocking flock that a POSIX timer interrupts: timer_create() on
// CLOCK_MONOTONIC with SIGEV_THREAD_ID aims a real-time signal at the waiting
// thread at the deadline, and the signal's handler (installed without
// SA_RESTART) does nothing but make flock return EINTR. The kernel wakes the
// waiter the moment the holder releases, as it does for any blocking flock.
//
// Caveats, handled below:
//   * The timer may fire between our deadline check and the next flock call
//     (after an unrelated EINTR); the signal would then be spent and flock
//     would block for good. The timer therefore repeats every millisecond
//     after the deadline until it is deleted.
//   * The signal is the highest of SIGRTMIN..SIGRTMAX whose disposition is
//     SIG_DFL when the first timed wait runs; the program's own handlers are
//     never replaced. It is unblocked in the waiting thread for the length of
//     the wait only, and any late delivery is consumed before the mask is
//     restored. If every real-time signal is taken, waits fall back to polling
//     with LOCK_NB at 1 ms, doubling to 20 ms.

#ifndef IPCLOCK_PLATFORM_TIMED_FLOCK_H_
#define IPCLOCK_PLATFORM_TIMED_FLOCK_H_

#include "platform/monotonic_deadline.h"

namespace ipclock {

// Locks `fd` with `operation` (LOCK_EX or LOCK_SH) by `deadline`. Returns 0
// once locked, EWOULDBLOCK if another holder still has it at the deadline, or
// the errno of a failure. `MonotonicDeadline::Past()` tries once without waiting.
// `*waited`, if given, says whether the first try found the lock busy (so
// that the lock, if granted, was granted after a wait).
int FlockUntil(int fd, int operation, MonotonicDeadline deadline, bool* waited = nullptr);

// As FlockUntil(), without the first try: blocks at once (a past deadline
// still tries once). For a caller whose own try found the lock busy an
// instant ago; the blocking flock(2) is itself a try that waits, so nothing
// is missed if the holder left in between.
int FlockWaitUntil(int fd, int operation, MonotonicDeadline deadline);

// The signal timed waits use, or 0 if none could be claimed (polling). For
// tests and `ipclock doctor`.
int TimedWaitSignal();

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_TIMED_FLOCK_H_
