// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/ipc_probe.h"

#include <fcntl.h>
#include <semaphore.h>
#include <sys/ipc.h>
#include <sys/sem.h>

namespace ipclock {

namespace {
union SemArg {
  int val;
  struct seminfo* info;
};
}  // namespace

std::optional<int64_t> NamedSemaphoreValue(const std::string& name) {
  sem_t* sem = sem_open(name.c_str(), 0);
  if (sem == SEM_FAILED) return std::nullopt;
  int value = 0;
  const bool ok = sem_getvalue(sem, &value) == 0;
  sem_close(sem);
  return ok ? std::optional<int64_t>(value) : std::nullopt;
}

std::optional<SysvSemUsage> ReadSysvSemUsage() {
  struct seminfo info;
  SemArg arg;
  arg.info = &info;
  if (semctl(0, 0, SEM_INFO, arg) < 0) return std::nullopt;
  SysvSemUsage usage;
  usage.sets = info.semusz;
  usage.semaphores = info.semaem;
  return usage;
}

}  // namespace ipclock
