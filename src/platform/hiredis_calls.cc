// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/hiredis_calls.h"

#include "ipclock_config.h"

namespace ipclock {
namespace {

HiredisCalls g_calls;

#define IPCLOCK_CLIENT_TABLE g_calls
const ClientSymbolSlot kSlots[] = {IPCLOCK_HIREDIS_CALLS(IPCLOCK_CLIENT_SLOT)};
#undef IPCLOCK_CLIENT_TABLE

ClientLibrary g_library({"the Redis client library (hiredis)", IPCLOCK_HIREDIS_SONAME,
                         IPCLOCK_HIREDIS_PACKAGE},
                        kSlots);

}  // namespace

#if IPCLOCK_CLIENT_LIBRARIES_DLOPEN
IPCLOCK_DLOPEN_NOTE(kHiredisDlopenNote,
                    "[{\"soname\":[\"" IPCLOCK_HIREDIS_SONAME
                    "\"],\"feature\":\"redis\","
                    "\"description\":\"the redis store (redis://)\",\"priority\":\"suggested\"}]");
#endif

HiredisCalls& Hiredis() { return g_calls; }
ClientLibrary& HiredisLibrary() { return g_library; }

}  // namespace ipclock
