// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/zookeeper_calls.h"

#include "ipclock_config.h"

namespace ipclock {

IPCLOCK_CLIENT_LIBRARY(ZooKeeperCalls, ZooKeeper, ZooKeeperLibrary,
                       "the ZooKeeper C client (libzookeeper_mt)",
                       IPCLOCK_ZOOKEEPER_SONAME, IPCLOCK_ZOOKEEPER_PACKAGE, "zookeeper",
                       "the ZooKeeper store (zookeeper://)",
                       IPCLOCK_ZOOKEEPER_CALLS(IPCLOCK_CLIENT_SLOT)
                       IPCLOCK_ZOOKEEPER_DATA(IPCLOCK_CLIENT_SLOT))

}  // namespace ipclock
