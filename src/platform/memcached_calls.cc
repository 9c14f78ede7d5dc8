// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/memcached_calls.h"

#include "ipclock_config.h"

namespace ipclock {
namespace {

MemcachedCalls g_calls;

#define IPCLOCK_CLIENT_TABLE g_calls
const ClientSymbolSlot kSlots[] = {IPCLOCK_MEMCACHED_CALLS(IPCLOCK_CLIENT_SLOT)};
#undef IPCLOCK_CLIENT_TABLE

ClientLibrary g_library({"the memcached client library (libmemcached)", IPCLOCK_MEMCACHED_SONAME,
                         IPCLOCK_MEMCACHED_PACKAGE},
                        kSlots);

}  // namespace

#if IPCLOCK_CLIENT_LIBRARIES_DLOPEN
IPCLOCK_DLOPEN_NOTE(
    kMemcachedDlopenNote,
    "[{\"soname\":[\"" IPCLOCK_MEMCACHED_SONAME
    "\"],\"feature\":\"memcached\","
    "\"description\":\"the memcached store (memcached://)\",\"priority\":\"suggested\"}]");
#endif

MemcachedCalls& Memcached() { return g_calls; }
ClientLibrary& MemcachedLibrary() { return g_library; }

}  // namespace ipclock
