// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/mariadb_calls.h"

#include "ipclock_config.h"

namespace ipclock {

IPCLOCK_CLIENT_LIBRARY(MariadbCalls, Mariadb, MariadbLibrary,
                       "the MySQL/MariaDB client library (MariaDB Connector/C)",
                       IPCLOCK_MARIADB_SONAME, IPCLOCK_MARIADB_PACKAGE, "mysql",
                       "the MySQL/MariaDB stores (mysql+advisory://, mysql://)",
                       IPCLOCK_MARIADB_CALLS(IPCLOCK_CLIENT_SLOT))

}  // namespace ipclock
