// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/sqlite_calls.h"

#include "ipclock_config.h"

namespace ipclock {

IPCLOCK_CLIENT_LIBRARY(SqliteCalls, Sqlite, SqliteLibrary,
                       "the SQLite library (libsqlite3)",
                       IPCLOCK_SQLITE_SONAME, IPCLOCK_SQLITE_PACKAGE, "sqlite",
                       "the SQLite table store (sqlite://)",
                       IPCLOCK_SQLITE_CALLS(IPCLOCK_CLIENT_SLOT))

}  // namespace ipclock
