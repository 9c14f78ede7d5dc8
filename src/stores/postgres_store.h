// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_POSTGRES_STORE_H_
#define IPCLOCK_STORES_POSTGRES_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_registry.h"
#include "ipclock_config.h"
#include "ipclock/postgres_store.h"

namespace ipclock {

// Builds a PostgreSQL store from a parsed `postgresql+advisory`,
// `pgsql+advisory` or `postgres+advisory` DSN (options in
// include/ipclock/postgres_store.h and doc/stores.md).
absl::StatusOr<std::shared_ptr<Store>> PostgresStoreFromDsn(
    Dsn& dsn, const StoreOptions& store_options);

// The registry's entry (core/store_registry.h); null in a build without it.
#if IPCLOCK_HAVE_POSTGRES
extern const StoreDriver kPostgresDriver;
inline constexpr const StoreDriver* kPostgresDriverIfBuilt = &kPostgresDriver;
#else
inline constexpr const StoreDriver* kPostgresDriverIfBuilt = nullptr;
#endif

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSTGRES_STORE_H_
