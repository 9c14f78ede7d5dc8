// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A flock store seen from outside (`ListHeldLocks()`, `CheckHost()`): where
// a `flock` DSN keeps its lock files, and who holds which of them now. Reads
// only: the lock dir is not created, no lock file is opened for writing and
// no lock is tried (a probe would itself be a holder for an instant).

#ifndef IPCLOCK_STORES_FLOCK_INSPECT_H_
#define IPCLOCK_STORES_FLOCK_INSPECT_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "ipclock/admin/inspect.h"

namespace ipclock {

// Where a `flock` DSN keeps its locks, read as the flock driver reads it
// but without building the store (which would create the dir).
struct FlockDsnTarget {
  // Absolute, without trailing slashes; empty for the default lock dir.
  std::string dir;
  // naming=path: resources are paths of files to lock, as flock(1) takes.
  bool path_naming = false;
};

// InvalidArgument, as the store itself says, for a host part or a relative
// dir. Other options are left for the store's own parser.
absl::StatusOr<FlockDsnTarget> ReadFlockDsn(const Dsn& dsn);

// The lister of its entry (core/store_entry.h): the lock files of the dir
// that are locked now, from /proc/locks, with their holder records.
absl::StatusOr<HeldLocks> ListFlockLocks(Dsn& dsn, const ListRequest& request);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_FLOCK_INSPECT_H_
