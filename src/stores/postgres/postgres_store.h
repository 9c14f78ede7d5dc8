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

#if IPCLOCK_HAVE_POSTGRES
// What a store of advisory locks can do (postgres_store.cc); its DSN's check
// (postgres_store_dsn.cc) says the same.
Capabilities PostgresCapabilities();
#endif

// Its driver and entry (core/store_entry.h), which the registry lists; the
// entry's driver is null in a build without it. The driver builds a PostgreSQL
// store from a parsed `postgresql+advisory`, `pgsql+advisory` or
// `postgres+advisory` DSN (options in include/ipclock/stores/postgres_store.h
// and doc/stores.md).
IPCLOCK_STORE_ENTRY(Postgres, Scope::kRemote, std::nullopt, "postgres", IPCLOCK_HAVE_POSTGRES,
                    "postgresql+advisory", "pgsql+advisory", "postgres+advisory");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSTGRES_STORE_H_
