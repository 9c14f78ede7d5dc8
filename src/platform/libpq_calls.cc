// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/libpq_calls.h"

#include "ipclock_config.h"

namespace ipclock {
namespace {

LibpqCalls g_calls;

#define IPCLOCK_CLIENT_TABLE g_calls
const ClientSymbolSlot kSlots[] = {IPCLOCK_LIBPQ_CALLS(IPCLOCK_CLIENT_SLOT)};
#undef IPCLOCK_CLIENT_TABLE

ClientLibrary g_library({"the PostgreSQL client library (libpq)", IPCLOCK_LIBPQ_SONAME,
                         IPCLOCK_LIBPQ_PACKAGE},
                        kSlots);

}  // namespace

#if IPCLOCK_CLIENT_LIBRARIES_DLOPEN
IPCLOCK_DLOPEN_NOTE(kLibpqDlopenNote,
                    "[{\"soname\":[\"" IPCLOCK_LIBPQ_SONAME
                    "\"],\"feature\":\"postgres\","
                    "\"description\":\"the PostgreSQL stores (postgresql+advisory://, "
                    "postgresql://)\",\"priority\":\"suggested\"}]");
#endif

LibpqCalls& Libpq() { return g_calls; }
ClientLibrary& LibpqLibrary() { return g_library; }

}  // namespace ipclock
