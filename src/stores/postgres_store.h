// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_STORES_POSTGRES_STORE_H_
#define IPCLOCK_STORES_POSTGRES_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock_config.h"
#include "ipclock/stores/postgres_store.h"

namespace ipclock {

// Builds a PostgreSQL store from a parsed `postgresql+advisory`,
// `pgsql+advisory` or `postgres+advisory` DSN (options in
// include/ipclock/stores/postgres_store.h and doc/stores.md).
absl::StatusOr<std::shared_ptr<Store>> PostgresStoreFromDsn(
    Dsn& dsn, const StoreOptions& store_options);

// Its entry's driver; null in a build without it.
#if IPCLOCK_HAVE_POSTGRES
extern const StoreDriver kPostgresDriver;
inline constexpr const StoreDriver* kPostgresDriverIfBuilt = &kPostgresDriver;
#else
inline constexpr const StoreDriver* kPostgresDriverIfBuilt = nullptr;
#endif

// Its entry (core/store_entry.h), which the registry lists.
inline constexpr absl::string_view kPostgresSchemes[] = {
    "postgresql+advisory", "pgsql+advisory", "postgres+advisory"};
inline constexpr StoreEntry kPostgresEntry = {
    "postgresql+advisory", kPostgresSchemes, Scope::kRemote, std::nullopt, "postgres",
    kPostgresDriverIfBuilt};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSTGRES_STORE_H_
