// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/process_id.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

#include "platform/proc_pid.h"

namespace ipclock {

namespace process_id_internal {
std::atomic<pid_t> g_pid{0};
}  // namespace process_id_internal

namespace {

thread_local pid_t t_tid = 0;
using process_id_internal::g_pid;
std::atomic<uint64_t> g_start_time{0};

void ResetIdsInChild() {
  t_tid = 0;
  g_pid.store(0, std::memory_order_relaxed);
  g_start_time.store(0, std::memory_order_relaxed);
}

// Called before the first value is cached: a fork that happens before
// registration has nothing to reset yet.
void RegisterAtfork() {
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, ResetIdsInChild);
    return true;
  }();
  (void)registered;
}

}  // namespace

pid_t process_id_internal::LoadPid() {
  RegisterAtfork();
  const pid_t pid = getpid();
  g_pid.store(pid, std::memory_order_relaxed);
  return pid;
}

pid_t CurrentTid() {
  if (t_tid == 0) {
    RegisterAtfork();
    t_tid = gettid();
  }
  return t_tid;
}

uint64_t CurrentProcessStartTime() {
  uint64_t start = g_start_time.load(std::memory_order_relaxed);
  if (start == 0) {
    // Two threads may both read /proc here; they store the same value.
    start = ProcessStartTime(CurrentPid());
    g_start_time.store(start, std::memory_order_relaxed);
  }
  return start;
}

}  // namespace ipclock
