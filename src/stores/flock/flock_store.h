// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_FLOCK_STORE_H_
#define IPCLOCK_STORES_FLOCK_STORE_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/stores/flock_store.h"
#include "stores/ticket_queue/ticket_queue.h"

namespace ipclock {

class FlockDir;

// What a FlockStore with `options` can do.
Capabilities FlockCapabilities(const FlockStoreOptions& options);

// The store over an opened lock dir (null: exact paths without a dir);
// NewFlockStore() checks the options and opens the dir first.
std::shared_ptr<Store> MakeFlockStore(const FlockStoreOptions& options,
                                      std::string dir_path,
                                      std::shared_ptr<FlockDir> dir);

// How old the last check of a lock file and its dir may be before an
// acquisition or a release checks again (include/ipclock/stores/flock_store.h,
// "What is checked, and when").
constexpr int64_t kFlockCheckAfterNanos = 1000 * 1000;

// The holder record at the start of a Symfony-named lock file, as another
// process (`ipclock list`) reads it.
struct FlockHolderRecord {
  uint64_t fence = 0;
  // Set while an exclusive holder has the lock; still set after a holder
  // died holding it.
  bool held = false;
  // The process that wrote the record, at its acquisition.
  pid_t pid = 0;
};

// Parses the first bytes of a lock file. False for a file without a record
// (never locked exclusively, `record=false`, or written by another tool).
// Parses `bytes` only, once: read them in one call and pass that copy.
bool ParseFlockHolderRecord(absl::string_view bytes, FlockHolderRecord* out);

// How many bytes ParseFlockHolderRecord() needs.
size_t FlockHolderRecordSize();

// How many Locks of `fair=true` stores queue for a lock file now (the one
// waiting in flock(2) included), from a copy of the file's first
// FlockQueueHeadSize() bytes: 0 for a file without a queue, or whose
// queue's words make no sense.
int64_t FlockQueueLength(absl::string_view head);
size_t FlockQueueHeadSize();
// Who queues, from a copy of the file's first FlockQueueSize() bytes: the
// waiters QueuedWaiters() (ticket_queue.h) names, in the queue's order.
std::vector<QueuedWaiter> FlockQueuedWaiters(absl::string_view head);
size_t FlockQueueSize();

// Its driver and entry (core/store_entry.h), which the registry lists.
IPCLOCK_STORE_ENTRY(Flock, Scope::kLocal, IpcKind::kLockDir, "", 1, "flock");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_FLOCK_STORE_H_
