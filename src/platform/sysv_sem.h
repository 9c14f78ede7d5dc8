// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// System V semaphore sets: the only place that calls semget(2), semop(2),
// semtimedop(2) and semctl(2). Each wrapper asks TakeFault() first (kSemget,
// kSemop, kSemctl) and returns 0 or the errno of the failure, never -1 with
// errno left for the caller to read after something else ran.
//
// Caveats of the kernel's interface, handled here once:
//   * semctl's fourth argument is a union the caller must define; it is
//     built here and never seen above.
//   * GETALL writes one value per semaphore of the set, however many the set
//     has: a buffer sized for the set we expect overflows on a larger one.
//     SysvGetAll() takes the buffer's size and refuses a set that does not
//     fit (EFBIG) after checking its size with IPC_STAT.
//   * EINTR: semop without a timeout is restarted here; timed waits return
//     EINTR so that the caller recomputes the time left.

#ifndef IPCLOCK_PLATFORM_SYSV_SEM_H_
#define IPCLOCK_PLATFORM_SYSV_SEM_H_

#include <errno.h>
#include <sys/sem.h>
#include <sys/types.h>
#include <time.h>

#include <cstddef>
#include <cstdint>

namespace ipclock {

// What IPC_STAT says of a set.
struct SysvSetStat {
  int32_t key = 0;
  int nsems = 0;
  uid_t uid = 0;
  unsigned mode = 0;
  // sem_otime: when a semop last succeeded on any semaphore of the set
  // (Unix seconds; 0 if none has).
  int64_t last_op_time = 0;
};

// semget(key, nsems, flags): the set id in `*semid`.
int SysvSemGet(int32_t key, int nsems, int flags, int* semid);

// semop, restarted on EINTR.
int SysvSemOp(int semid, struct sembuf* ops, size_t n);
// semop once (IPC_NOWAIT callers, and waits the caller restarts itself).
int SysvSemOpOnce(int semid, struct sembuf* ops, size_t n);
// semtimedop with a relative timeout on CLOCK_MONOTONIC; EINTR and EAGAIN
// (the timeout, or IPC_NOWAIT) are returned.
int SysvSemTimedOp(int semid, struct sembuf* ops, size_t n,
                   const struct timespec* timeout);

// semctl GETVAL, GETPID, GETNCNT of semaphore `num`.
int SysvGetVal(int semid, int num, int* value);
int SysvGetPid(int semid, int num, pid_t* pid);
int SysvGetNcnt(int semid, int num, int* waiters);
// semctl SETVAL.
int SysvSetVal(int semid, int num, int value);
// semctl GETALL into `values`, which holds `capacity` entries. EFBIG if the
// set has more semaphores than that; `*nsems` says how many it has.
int SysvGetAll(int semid, unsigned short* values, int capacity, int* nsems);
// semctl IPC_STAT.
int SysvStat(int semid, SysvSetStat* out);
// semctl IPC_RMID.
int SysvRemove(int semid);

// For listings, as ipcs(1) walks sets: the highest kernel index in use
// (SEM_INFO), and the set at an index (SEM_STAT) with its id.
int SysvMaxIndex(int* max_index);
int SysvStatIndex(int index, int* semid, SysvSetStat* out);

// EIDRM: the set was removed while we slept on it. EINVAL: it was removed
// before the call (the id no longer names a set). Both mean "gone".
inline bool SysvSetGone(int err) { return err == EIDRM || err == EINVAL; }

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SYSV_SEM_H_
