// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Compiled only when hiredis is found (Meson feature `redis`).

#ifndef IPCLOCK_STORES_REDIS_STORE_H_
#define IPCLOCK_STORES_REDIS_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock_config.h"
#include "ipclock/stores/redis_store.h"

namespace ipclock {

// NewRedisStore()'s checks of `options`, made before it connects: values,
// the Unix socket's path and type (core/named_file.h), the key naming.
absl::Status CheckRedisOptions(const RedisStoreOptions& options);

// What a RedisStore with `options` can do.
Capabilities RedisCapabilities(const RedisStoreOptions& options);

// The longest connect or command timeout.
inline constexpr absl::Duration kRedisMaxTimeout = absl::Hours(1);

// Its driver and entry (core/store_entry.h), which the registry lists; the
// entry's driver is null in a build without it. The driver builds a RedisStore
// from a parsed `redis` DSN (see include/ipclock/stores/redis_store.h for the
// forms and options). `rediss` is Unimplemented.
IPCLOCK_STORE_ENTRY(Redis, Scope::kRemote, std::nullopt, "redis", IPCLOCK_HAVE_REDIS,
                    "redis", "rediss");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_REDIS_STORE_H_
