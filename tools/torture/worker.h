// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// One torture worker: a process that acquires, checks and updates the
// shared record, and releases, until told to stop or killed.

#ifndef IPCLOCK_TOOLS_TORTURE_WORKER_H_
#define IPCLOCK_TOOLS_TORTURE_WORKER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/store.h"
#include "torture/record.h"

namespace ipclock_torture {

struct WorkerParams {
  Record* record = nullptr;
  int slot = 0;
  std::string dsn;  // expanded
  std::string resource;
  absl::Duration ttl;
  absl::Duration wait_bound;
  int hold_us = 0;
};

// The store of `dsn` as torture opens it, in a worker or to probe it:
// without the RemoveIPC guard, whose warning about a lock dir under /tmp
// (where the scratch stores live) would only be noise.
absl::StatusOr<std::shared_ptr<ipclock::Store>> OpenStore(const std::string& dsn);

// Runs in a forked child; returns its exit code (0 after a clean stop).
// Every finding goes to the record, never to a return value, since a worker
// may be killed before it returns.
int WorkerMain(const WorkerParams& params);

}  // namespace ipclock_torture

#endif  // IPCLOCK_TOOLS_TORTURE_WORKER_H_
