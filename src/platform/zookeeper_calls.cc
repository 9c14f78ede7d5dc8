// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/zookeeper_calls.h"

#include "ipclock_config.h"

namespace ipclock {
namespace {

ZooKeeperCalls g_calls;

#define IPCLOCK_CLIENT_TABLE g_calls
const ClientSymbolSlot kSlots[] = {IPCLOCK_ZOOKEEPER_CALLS(IPCLOCK_CLIENT_SLOT)
                                       IPCLOCK_ZOOKEEPER_DATA(IPCLOCK_CLIENT_SLOT)};
#undef IPCLOCK_CLIENT_TABLE

ClientLibrary g_library({"the ZooKeeper C client (libzookeeper_mt)", IPCLOCK_ZOOKEEPER_SONAME,
                         IPCLOCK_ZOOKEEPER_PACKAGE},
                        kSlots);

}  // namespace

#if IPCLOCK_CLIENT_LIBRARIES_DLOPEN
IPCLOCK_DLOPEN_NOTE(
    kZooKeeperDlopenNote,
    "[{\"soname\":[\"" IPCLOCK_ZOOKEEPER_SONAME
    "\"],\"feature\":\"zookeeper\","
    "\"description\":\"the ZooKeeper store (zookeeper://)\",\"priority\":\"suggested\"}]");
#endif

ZooKeeperCalls& ZooKeeper() { return g_calls; }
ClientLibrary& ZooKeeperLibrary() { return g_library; }

}  // namespace ipclock
