// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace ipclock {

namespace {

// futex_waitv(2) and its flags, absent from the headers of older
// distributions: uapi values since Linux 5.16.
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
constexpr uint32_t kFutex2SizeU32 = 0x02;
constexpr uint32_t kFutex2Private = 128;

struct WaitvEntry {
  uint64_t val;
  uint64_t uaddr;
  uint32_t flags;
  uint32_t reserved;
};

int ErrnoOf(long rc) { return rc == -1 ? errno : 0; }

// The absolute timeout the calls take: null for no deadline.
const struct timespec* AbsTimeout(MonotonicDeadline deadline, struct timespec* storage) {
  if (deadline.is_never()) return nullptr;
  *storage = deadline.ToTimespec();
  return storage;
}

}  // namespace

int FutexWaitUntil(uint32_t* word, uint32_t expected, bool shared, MonotonicDeadline deadline) {
  return FutexWaitBitsUntil(word, expected, FUTEX_BITSET_MATCH_ANY, shared, deadline);
}

int FutexWaitBitsUntil(uint32_t* word, uint32_t expected, uint32_t bits, bool shared,
                       MonotonicDeadline deadline) {
  // FUTEX_WAIT_BITSET takes an absolute timeout, on CLOCK_MONOTONIC unless
  // FUTEX_CLOCK_REALTIME is given; plain FUTEX_WAIT would take a relative one.
  const int op = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG);
  struct timespec ts;
  const struct timespec* at = AbsTimeout(deadline, &ts);
  return ErrnoOf(syscall(SYS_futex, word, op, expected, at, nullptr, bits));
}

int FutexWakeBits(uint32_t* word, int count, uint32_t bits, bool shared) {
  const int op = FUTEX_WAKE_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG);
  const long rc = syscall(SYS_futex, word, op, count, nullptr, nullptr, bits);
  return rc >= 0 ? static_cast<int>(rc) : -errno;
}

int FutexWaitOrCancelUntil(uint32_t* word, uint32_t expected, bool shared,
                           uint32_t* cancel_word, MonotonicDeadline deadline) {
  WaitvEntry entries[2] = {};
  entries[0].val = expected;
  entries[0].uaddr = reinterpret_cast<uintptr_t>(word);
  entries[0].flags = kFutex2SizeU32 | (shared ? 0 : kFutex2Private);
  entries[1].val = 0;
  entries[1].uaddr = reinterpret_cast<uintptr_t>(cancel_word);
  entries[1].flags = kFutex2SizeU32 | kFutex2Private;
  struct timespec ts;
  const struct timespec* at = AbsTimeout(deadline, &ts);
  const long rc = syscall(SYS_futex_waitv, entries, 2, 0, at, CLOCK_MONOTONIC);
  if (rc < 0) return errno == EAGAIN && *cancel_word != 0 ? ECANCELED : errno;
  return rc == 1 ? ECANCELED : 0;  // the index of the word that was woken
}

int FutexWake(uint32_t* word, int count, bool shared) {
  const int op = FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG);
  const long rc = syscall(SYS_futex, word, op, count, nullptr, nullptr, 0);
  return rc >= 0 ? static_cast<int>(rc) : -errno;
}

}  // namespace ipclock
