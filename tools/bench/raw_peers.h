// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The floors: each kernel or libc primitive that a store is built on,
// called by hand with nothing around it. Each returns the median ns per
// operation (< 0 on failure) and removes whatever it created.

#ifndef IPCLOCK_TOOLS_BENCH_RAW_PEERS_H_
#define IPCLOCK_TOOLS_BENCH_RAW_PEERS_H_

#include <pthread.h>
#include <time.h>

#include <string>

#include "measure.h"

namespace ipclock_bench {

// A robust, process-shared mutex in a shared anonymous mapping (which a
// fork()ed child shares), with priority inheritance if asked, or nullptr;
// and its removal.
pthread_mutex_t* MapRobustMutex(bool priority_inheritance = false);
void UnmapRobustMutex(pthread_mutex_t* mu);
// pthread_mutex_lock + unlock of a robust, process-shared mutex in a shared
// mapping.
double RawRobustMutexPair(const RunShape& shape);
// flock(LOCK_EX|LOCK_NB) + flock(LOCK_UN) on a file kept open in `dir`.
double RawFlockPair(const RunShape& shape, const std::string& dir);
// open + flock(LOCK_EX|LOCK_NB) + close (which releases) of a file in `dir`.
double RawOpenFlockClose(const RunShape& shape, const std::string& dir);
// The same over `files` files of one dir, taken in turn: what any lock on
// that many names pays in the kernel (lookups in a big dir, inodes the
// caches no longer hold).
double RawOpenFlockCloseOver(const RunShape& shape, const std::string& dir, int files);
// semop(-1, IPC_NOWAIT|SEM_UNDO) + semop(+1, SEM_UNDO) on a private set:
// SEM_UNDO because a lock must come back when its holder dies.
double RawSemopPair(const RunShape& shape);
// sem_wait + sem_post of a named POSIX semaphore.
double RawPosixSemPair(const RunShape& shape);
// One clock_gettime(clock): the price of a clock read on this machine,
// printed beside the reused-handle rows, which must not pay one per call
// (CLOCK_MONOTONIC costs 20 to 40 ns on a VM whose TSC the vDSO cannot
// use; CLOCK_MONOTONIC_COARSE is a few ns everywhere).
double ClockReadNs(const RunShape& shape, clockid_t clock);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_RAW_PEERS_H_
