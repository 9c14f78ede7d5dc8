// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_SYSV_SEMAPHORE_STORE_H_
#define IPCLOCK_STORES_SYSV_SEMAPHORE_STORE_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/stores/semaphore_store.h"

namespace ipclock {

// One SysV semaphore set with PHP's layout (3 semaphores) or ipclock's (5),
// as ListSemaphoreSets() found it.
struct SemaphoreSetInfo {
  int32_t ipc_key = 0;
  int semid = -1;
  bool own_layout = false;  // ipclock's 5 semaphores
  int value = 0;            // semval of the lock semaphore (#0)
  int permits = 1;          // what #0 holds when nobody holds a permit
  pid_t last_pid = 0;       // GETPID of #0: the last process to operate on it
  int waiters = 0;          // GETNCNT of #0
  int64_t last_op_time = 0; // sem_otime of the set (SysvSetStat)
};

// Every set of those layouts that this process may read, walked by kernel
// index with SEM_INFO and SEM_STAT (as ipcs(1) does), for `ipclock list`.
// Reads only; a set removed during the walk is left out. Other programs'
// sets of 3 or 5 semaphores are included: the key is all that tells them
// apart, and it is a hash of the resource.
absl::StatusOr<std::vector<SemaphoreSetInfo>> ListSemaphoreSets();

// Its driver and entry (core/store_entry.h), which the registry lists. The
// driver builds a SemaphoreStore from a parsed `semaphore` DSN (no address;
// options key_scheme=md5|xxh3 and mode).
IPCLOCK_STORE_ENTRY(Semaphore, Scope::kLocal, IpcKind::kSysV, "", 1, "semaphore");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SYSV_SEMAPHORE_STORE_H_
