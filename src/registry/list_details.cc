// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "registry/list_details.h"

#include "platform/proc_pid.h"

namespace ipclock {

void AddProcessDetails(HeldLocks* held) {
  for (HeldLock& row : held->locks) {
    if (row.lock.empty()) row.lock = row.object;
    if (row.pid > 0 && !row.command.empty()) {
      row.command_line = ProcessCommandLine(row.pid);
      ProcessCgroup cgroup = ReadProcessCgroup(row.pid);
      row.cgroup = std::move(cgroup.path);
      row.unit = std::move(cgroup.unit);
    }
    for (LockWaiter& w : row.waiter_list) {
      if (w.pid > 0 && !w.command.empty()) w.unit = ReadProcessCgroup(w.pid).unit;
    }
    if (!row.waiters && !row.waiter_list.empty()) {
      row.waiters = static_cast<int64_t>(row.waiter_list.size());
    }
  }
}

}  // namespace ipclock
