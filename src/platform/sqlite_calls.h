// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table of calls into libsqlite3, for the SQLite table store (sqlite://):
// every call ipclock makes into the library goes through `Sqlite()`, after
// `SqliteLibrary().Load()` succeeded (platform/client_library.h says why, and
// how tests replace a call).

#ifndef IPCLOCK_PLATFORM_SQLITE_CALLS_H_
#define IPCLOCK_PLATFORM_SQLITE_CALLS_H_

// Empty in a build without the library, so that code that deals with
// every client library can include each table without an #if.
#include "ipclock_config.h"
#if IPCLOCK_HAVE_SQLITE

#include <sqlite3.h>

#include "platform/client_library.h"

// The functions ipclock calls, one X(name) each.
#define IPCLOCK_SQLITE_CALLS(X)    \
  X(sqlite3_busy_timeout)          \
  X(sqlite3_changes64)             \
  X(sqlite3_close_v2)              \
  X(sqlite3_column_count)          \
  X(sqlite3_column_text)           \
  X(sqlite3_errmsg)                \
  X(sqlite3_errstr)                \
  X(sqlite3_extended_result_codes) \
  X(sqlite3_finalize)              \
  X(sqlite3_open_v2)               \
  X(sqlite3_prepare_v2)            \
  X(sqlite3_step)                  \
  X(sqlite3_system_errno)

namespace ipclock {

struct SqliteCalls {
  IPCLOCK_SQLITE_CALLS(IPCLOCK_CLIENT_CALL_MEMBER)
};

// The table. Its calls are null until SqliteLibrary().Load() succeeded.
SqliteCalls& Sqlite();
// Loads the library on first use.
ClientLibrary& SqliteLibrary();

}  // namespace ipclock

#endif  // IPCLOCK_HAVE_SQLITE

#endif  // IPCLOCK_PLATFORM_SQLITE_CALLS_H_
