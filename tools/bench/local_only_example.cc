// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The smallest useful program on the local stores, built only so that the
// benchmark can report what ipclock adds to a binary. It names its stores
// directly rather than through StoreFromDsn, which would link every store of
// the build, the Redis and PostgreSQL clients included.

#include <cstdio>
#include <cstring>

#include "ipclock/stores/flock_store.h"
#include "ipclock/lock.h"
#include "ipclock/stores/shm_store.h"

int main(int argc, char** argv) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store;
  if (argc > 1 && std::strcmp(argv[1], "shm") == 0) {
    ipclock::ShmStoreOptions options;
    options.name = "example";
    store = ipclock::NewShmStore(options);
  } else {
    store = ipclock::NewFlockStore(ipclock::FlockStoreOptions());
  }
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(*store, "example");
  if (!lock.ok() || !lock->Acquire().ok()) return 1;
  return 0;
}
