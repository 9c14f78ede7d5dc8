// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fault injection for tests: make the platform layer's own system calls fail
// as the kernel would under pressure (ENOSPC, EINTR, EMFILE, EIO, a short
// write), without root and without a full disk. Each wrapper in platform/
// asks `TakeFault()` before its call; when nothing is armed that is one
// relaxed atomic load.
//
// Faults are process-wide and meant for tests only: a test arms one, runs
// the code under test, and checks that the error is reported (naming the
// store, the resource and the call) and that nothing was lost.

#ifndef IPCLOCK_PLATFORM_FAULTS_H_
#define IPCLOCK_PLATFORM_FAULTS_H_

#include <atomic>
#include <cstddef>

namespace ipclock {

// The calls a fault can be aimed at.
enum class FaultPoint {
  kOpen,       // open, openat, shm_open, sem_open (EMFILE, ENOSPC, EACCES...)
  kRead,       // read, pread
  kWrite,      // write, pwrite (an errno, or a short write)
  kFsync,
  kStat,       // fstat, fstatat
  kChmod,      // fchmod
  kTruncate,   // ftruncate, fallocate
  kMkdir,
  kMmap,
  kFlock,
  kSemget,
  kSemop,      // semop, semtimedop
  kSemctl,
  kSemWait,    // sem_wait, sem_clockwait, sem_trywait
  kSemPost,
  kMutexInit,  // pthread_mutex_init and its attributes
  kLink,       // link, linkat
  kMutexLock,  // pthread_mutex_{lock,trylock,clocklock,timedlock,consistent,unlock}
  kUnlink,     // unlink, shm_unlink
  kCount,
};

// The next `count` calls at `point`, after `skip` calls that succeed, fail
// with `err`. For kWrite, `err` 0 with `short_bytes` > 0 makes those calls
// write only `short_bytes` bytes instead.
void InjectFault(FaultPoint point, int err, int count = 1, int skip = 0,
                 size_t short_bytes = 0);
// Disarms every fault.
void ClearFaults();

namespace internal {
extern std::atomic<bool> g_any_fault_armed;
// The errno to fail with (or -1 for a short write, whose length goes to
// `*short_bytes`), or 0 to make the call.
int TakeFaultSlow(FaultPoint point, size_t* short_bytes);
}  // namespace internal

// Asked by every wrapper before its system call.
inline int TakeFault(FaultPoint point, size_t* short_bytes = nullptr) {
  if (!internal::g_any_fault_armed.load(std::memory_order_relaxed)) return 0;
  return internal::TakeFaultSlow(point, short_bytes);
}

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_FAULTS_H_
