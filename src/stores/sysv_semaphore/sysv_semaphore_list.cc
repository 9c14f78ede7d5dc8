// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ListSemaphoreSets(): the SysV sets of PHP's and ipclock's layouts, for
// `ipclock list`. Reads only.

#include <cstdint>
#include <vector>

#include "platform/errors.h"
#include "platform/sysv_sem.h"
#include "stores/sysv_semaphore/sysv_semaphore_set.h"
#include "stores/sysv_semaphore/sysv_semaphore_store.h"

namespace ipclock {

absl::StatusOr<std::vector<SemaphoreSetInfo>> ListSemaphoreSets() {
  int max_index = 0;
  if (int err = SysvMaxIndex(&max_index); err != 0) {
    return ErrnoError(err, "semaphore", "", "semctl SEM_INFO");
  }
  std::vector<SemaphoreSetInfo> out;
  for (int index = 0; index <= max_index; ++index) {
    int semid = -1;
    SysvSetStat st;
    // An unused index, or a set we may not read.
    if (SysvStatIndex(index, &semid, &st) != 0) continue;
    if (st.nsems != kSysvPhpSems && st.nsems != kSysvOwnSems) continue;
    SemaphoreSetInfo set;
    set.ipc_key = st.key;
    set.semid = semid;
    set.own_layout = st.nsems == kSysvOwnSems;
    set.last_op_time = st.last_op_time;
    // 0 in the record: PHP initialized the set, always for one holder.
    int recorded = 1;
    // Any failure: removed meanwhile.
    if (SysvGetVal(semid, kSysvLockSem, &set.value) != 0 ||
        (set.own_layout && SysvGetVal(semid, kSysvPermitsSem, &recorded) != 0) ||
        SysvGetPid(semid, kSysvLockSem, &set.last_pid) != 0 ||
        SysvGetNcnt(semid, kSysvLockSem, &set.waiters) != 0) {
      continue;
    }
    set.permits = recorded == 0 ? 1 : recorded;
    out.push_back(set);
  }
  return out;
}

}  // namespace ipclock
