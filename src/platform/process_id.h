// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// This process's and thread's ids, and this process's start time, cached.
//
// getpid() and gettid() are system calls in glibc >= 2.25, and the start
// time is a read of /proc/self/stat: too dear for an acquisition path. The
// caches are reset in the child by a pthread_atfork handler, registered
// before anything is cached (the forking thread is the only thread in the
// child, so resetting its thread-local id is enough).
//
// Caveat: a child made by a raw clone(2) or vfork(2) system call runs no
// atfork handler and would see its parent's ids; fork(), posix_spawn() and
// glibc's vfork() followed by exec are fine.

#ifndef IPCLOCK_PLATFORM_PROCESS_ID_H_
#define IPCLOCK_PLATFORM_PROCESS_ID_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace ipclock {

namespace process_id_internal {
extern std::atomic<pid_t> g_pid;  // 0 until cached, and in a new child
pid_t LoadPid();
}  // namespace process_id_internal

// Inline: the shm store's acquisitions and releases ask for it.
inline pid_t CurrentPid() {
  const pid_t pid = process_id_internal::g_pid.load(std::memory_order_relaxed);
  return pid != 0 ? pid : process_id_internal::LoadPid();
}
pid_t CurrentTid();

// This process's start time as ProcessStartTime(CurrentPid()) reads it
// (clock ticks since boot; 0 if /proc cannot be read, which is then retried
// at the next call).
uint64_t CurrentProcessStartTime();

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_PROCESS_ID_H_
