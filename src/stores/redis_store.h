// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Compiled only when hiredis is found (Meson feature `redis`).

#ifndef IPCLOCK_STORES_REDIS_STORE_H_
#define IPCLOCK_STORES_REDIS_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "ipclock/redis_store.h"

namespace ipclock {

// Builds a RedisStore from a parsed `redis` DSN (see
// include/ipclock/redis_store.h for the forms and options). `rediss` is
// Unimplemented.
absl::StatusOr<std::shared_ptr<Store>> RedisStoreFromDsn(Dsn& dsn);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_REDIS_STORE_H_
