// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Reading IPC objects from outside, for `ipclock list` and `ipclock doctor`:
// nothing here creates, takes or changes anything.

#ifndef IPCLOCK_PLATFORM_IPC_PROBE_H_
#define IPCLOCK_PLATFORM_IPC_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>

namespace ipclock {

// The value (permits free now) of the named POSIX semaphore `name` ("/x"),
// or nullopt if it cannot be opened. sem_open without O_CREAT creates
// nothing.
std::optional<int64_t> NamedSemaphoreValue(const std::string& name);

// SysV semaphores in use on this host (semctl SEM_INFO), or nullopt where
// the kernel has no SysV IPC.
struct SysvSemUsage {
  long sets = 0;        // semusz
  long semaphores = 0;  // semaem
};
std::optional<SysvSemUsage> ReadSysvSemUsage();

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_IPC_PROBE_H_
