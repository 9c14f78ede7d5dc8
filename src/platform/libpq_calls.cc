// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/libpq_calls.h"

#include "ipclock_config.h"

namespace ipclock {

IPCLOCK_CLIENT_LIBRARY(LibpqCalls, Libpq, LibpqLibrary,
                       "the PostgreSQL client library (libpq)",
                       IPCLOCK_LIBPQ_SONAME, IPCLOCK_LIBPQ_PACKAGE, "postgres",
                       "the PostgreSQL stores (postgresql+advisory://, postgresql://)",
                       IPCLOCK_LIBPQ_CALLS(IPCLOCK_CLIENT_SLOT))

}  // namespace ipclock
