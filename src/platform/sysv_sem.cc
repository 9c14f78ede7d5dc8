// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/sysv_sem.h"

#include <errno.h>
#include <sys/ipc.h>

#include "platform/faults.h"

namespace ipclock {

namespace {

// semctl(2): "the calling program must define this union".
union SemArg {
  int val;
  struct semid_ds* buf;
  unsigned short* array;
  struct seminfo* info;
};

SysvSetStat FromDs(const struct semid_ds& ds) {
  SysvSetStat out;
  out.key = static_cast<int32_t>(ds.sem_perm.__key);
  out.nsems = static_cast<int>(ds.sem_nsems);
  out.uid = ds.sem_perm.uid;
  out.mode = ds.sem_perm.mode & 0777u;
  out.last_op_time = static_cast<int64_t>(ds.sem_otime);
  return out;
}

}  // namespace

int SysvSemGet(int32_t key, int nsems, int flags, int* semid) {
  if (int err = TakeFault(FaultPoint::kSemget)) return err;
  const int id = semget(static_cast<key_t>(key), nsems, flags);
  if (id < 0) return errno;
  *semid = id;
  return 0;
}

int SysvSemOp(int semid, struct sembuf* ops, size_t n) {
  for (;;) {
    const int err = SysvSemOpOnce(semid, ops, n);
    if (err != EINTR) return err;
  }
}

int SysvSemOpOnce(int semid, struct sembuf* ops, size_t n) {
  if (int err = TakeFault(FaultPoint::kSemop)) return err;
  return semop(semid, ops, n) == 0 ? 0 : errno;
}

int SysvSemTimedOp(int semid, struct sembuf* ops, size_t n,
                   const struct timespec* timeout) {
  if (int err = TakeFault(FaultPoint::kSemop)) return err;
  return semtimedop(semid, ops, n, timeout) == 0 ? 0 : errno;
}

int SysvGetVal(int semid, int num, int* value) {
  if (int err = TakeFault(FaultPoint::kSemctl)) return err;
  const int v = semctl(semid, num, GETVAL);
  if (v < 0) return errno;
  *value = v;
  return 0;
}

int SysvGetPid(int semid, int num, pid_t* pid) {
  if (int err = TakeFault(FaultPoint::kSemctl)) return err;
  const int v = semctl(semid, num, GETPID);
  if (v < 0) return errno;
  *pid = static_cast<pid_t>(v);
  return 0;
}

int SysvGetNcnt(int semid, int num, int* waiters) {
  if (int err = TakeFault(FaultPoint::kSemctl)) return err;
  const int v = semctl(semid, num, GETNCNT);
  if (v < 0) return errno;
  *waiters = v;
  return 0;
}

int SysvSetVal(int semid, int num, int value) {
  if (int err = TakeFault(FaultPoint::kSemctl)) return err;
  SemArg arg;
  arg.val = value;
  return semctl(semid, num, SETVAL, arg) == 0 ? 0 : errno;
}

int SysvGetAll(int semid, unsigned short* values, int capacity, int* nsems) {
  SysvSetStat st;
  if (int err = SysvStat(semid, &st)) return err;
  *nsems = st.nsems;
  if (st.nsems > capacity || st.nsems <= 0) return EFBIG;
  if (int err = TakeFault(FaultPoint::kSemctl)) return err;
  SemArg arg;
  arg.array = values;
  // A set's size is fixed when it is made: one that IPC_STAT measured can
  // only have been replaced by another under a new id, which GETALL on
  // this id then refuses (EINVAL/EIDRM).
  return semctl(semid, 0, GETALL, arg) == 0 ? 0 : errno;
}

int SysvStat(int semid, SysvSetStat* out) {
  if (int err = TakeFault(FaultPoint::kSemctl)) return err;
  struct semid_ds ds;
  SemArg arg;
  arg.buf = &ds;
  if (semctl(semid, 0, IPC_STAT, arg) != 0) return errno;
  *out = FromDs(ds);
  return 0;
}

int SysvRemove(int semid) {
  if (int err = TakeFault(FaultPoint::kSemctl)) return err;
  return semctl(semid, 0, IPC_RMID) == 0 ? 0 : errno;
}

int SysvMaxIndex(int* max_index) {
  if (int err = TakeFault(FaultPoint::kSemctl)) return err;
  struct seminfo info;
  SemArg arg;
  arg.info = &info;
  const int v = semctl(0, 0, SEM_INFO, arg);
  if (v < 0) return errno;
  *max_index = v;
  return 0;
}

int SysvStatIndex(int index, int* semid, SysvSetStat* out) {
  if (int err = TakeFault(FaultPoint::kSemctl)) return err;
  struct semid_ds ds;
  SemArg arg;
  arg.buf = &ds;
  const int id = semctl(index, 0, SEM_STAT, arg);
  if (id < 0) return errno;
  *semid = id;
  *out = FromDs(ds);
  return 0;
}

}  // namespace ipclock
