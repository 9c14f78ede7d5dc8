// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Compiled only when MariaDB Connector/C is found (Meson feature `mysql`).

#ifndef IPCLOCK_STORES_MYSQL_STORE_H_
#define IPCLOCK_STORES_MYSQL_STORE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/stores/mysql_store.h"
#include "ipclock_config.h"

namespace ipclock {

// The named locks held on the server, for `ipclock list`: from
// information_schema.METADATA_LOCK_INFO (the metadata_lock_info plugin) or
// performance_schema.metadata_locks when the server has either; otherwise,
// with a resource given, IS_USED_LOCK of its name. FailedPrecondition
// saying what to turn on when the server can tell nothing.
absl::StatusOr<HeldLocks> ListMysqlAdvisoryLocks(
    Dsn& dsn, const ListRequest& request);

// Its driver and entry (core/store_entry.h), which the registry lists; the
// entry's driver is null in a build without it. The driver builds a MySQL
// advisory store from a parsed `mysql+advisory` DSN (forms and options in
// include/ipclock/stores/mysql_store.h).
IPCLOCK_STORE_ENTRY(MysqlAdvisory, Scope::kRemote, std::nullopt, "mysql", IPCLOCK_HAVE_MYSQL,
                    "mysql+advisory");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_MYSQL_STORE_H_
