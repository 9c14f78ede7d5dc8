// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_FLOCK_STORE_H_
#define IPCLOCK_STORES_FLOCK_STORE_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "core/dsn.h"
#include "core/store_registry.h"
#include "ipclock/flock_store.h"

namespace ipclock {

// Builds a FlockStore from a parsed `flock` DSN: `flock`, `flock:///dir`,
// options naming=symfony|path, dir_mode, file_mode, record.
absl::StatusOr<std::shared_ptr<Store>> FlockStoreFromDsn(
    Dsn& dsn, const StoreOptions& store_options);

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
bool ParseFlockHolderRecord(absl::string_view bytes, FlockHolderRecord* out);

// How many bytes ParseFlockHolderRecord() needs.
size_t FlockHolderRecordSize();

// The registry's entry (core/store_registry.h).
extern const StoreDriver kFlockDriver;

}  // namespace ipclock

#endif  // IPCLOCK_STORES_FLOCK_STORE_H_
