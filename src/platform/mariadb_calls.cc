// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/mariadb_calls.h"

#include "ipclock_config.h"

namespace ipclock {
namespace {

MariadbCalls g_calls;

#define IPCLOCK_CLIENT_TABLE g_calls
const ClientSymbolSlot kSlots[] = {IPCLOCK_MARIADB_CALLS(IPCLOCK_CLIENT_SLOT)};
#undef IPCLOCK_CLIENT_TABLE

ClientLibrary g_library({"the MySQL/MariaDB client library (MariaDB Connector/C)",
                         IPCLOCK_MARIADB_SONAME, IPCLOCK_MARIADB_PACKAGE},
                        kSlots);

}  // namespace

#if IPCLOCK_CLIENT_LIBRARIES_DLOPEN
IPCLOCK_DLOPEN_NOTE(kMariadbDlopenNote,
                    "[{\"soname\":[\"" IPCLOCK_MARIADB_SONAME
                    "\"],\"feature\":\"mysql\","
                    "\"description\":\"the MySQL/MariaDB stores (mysql+advisory://, "
                    "mysql://)\",\"priority\":\"suggested\"}]");
#endif

MariadbCalls& Mariadb() { return g_calls; }
ClientLibrary& MariadbLibrary() { return g_library; }

}  // namespace ipclock
