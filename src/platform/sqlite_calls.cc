// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/sqlite_calls.h"

#include "ipclock_config.h"

namespace ipclock {
namespace {

SqliteCalls g_calls;

#define IPCLOCK_CLIENT_TABLE g_calls
const ClientSymbolSlot kSlots[] = {IPCLOCK_SQLITE_CALLS(IPCLOCK_CLIENT_SLOT)};
#undef IPCLOCK_CLIENT_TABLE

ClientLibrary g_library({"the SQLite library (libsqlite3)", IPCLOCK_SQLITE_SONAME,
                         IPCLOCK_SQLITE_PACKAGE},
                        kSlots);

}  // namespace

#if IPCLOCK_CLIENT_LIBRARIES_DLOPEN
IPCLOCK_DLOPEN_NOTE(
    kSqliteDlopenNote,
    "[{\"soname\":[\"" IPCLOCK_SQLITE_SONAME
    "\"],\"feature\":\"sqlite\","
    "\"description\":\"the SQLite table store (sqlite://)\",\"priority\":\"suggested\"}]");
#endif

SqliteCalls& Sqlite() { return g_calls; }
ClientLibrary& SqliteLibrary() { return g_library; }

}  // namespace ipclock
