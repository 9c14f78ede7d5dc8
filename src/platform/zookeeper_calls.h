// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table of calls into the ZooKeeper C client, for the ZooKeeper store
// (zookeeper://): every call ipclock makes into the library goes through
// `ZooKeeper()`, after `ZooKeeperLibrary().Load()` succeeded
// (platform/client_library.h says why, and how tests replace a call).

#ifndef IPCLOCK_PLATFORM_ZOOKEEPER_CALLS_H_
#define IPCLOCK_PLATFORM_ZOOKEEPER_CALLS_H_

// Empty in a build without the library, so that code that deals with
// every client library can include each table without an #if.
#include "ipclock_config.h"
#if IPCLOCK_HAVE_ZOOKEEPER

#include <zookeeper/zookeeper.h>

#include "platform/client_library.h"

// The functions ipclock calls, one X(name) each.
#define IPCLOCK_ZOOKEEPER_CALLS(X)    \
  X(zerror)                           \
  X(zoo_acreate2)                     \
  X(zoo_adelete)                      \
  X(zoo_aexists)                      \
  X(zoo_aget)                         \
  X(zoo_aget_children)                \
  X(zoo_amulti)                       \
  X(zoo_aset)                         \
  X(zoo_client_id)                    \
  X(zoo_create_op_init)               \
  X(zoo_delete_op_init)               \
  X(zoo_recv_timeout)                 \
  X(zoo_set_op_init)                  \
  X(zoo_set_servers_resolution_delay) \
  X(zoo_state)                        \
  X(zookeeper_close)                  \
  X(zookeeper_init2)

// The objects it exports that ipclock reads (node modes, states, the open
// ACL).
#define IPCLOCK_ZOOKEEPER_DATA(X) \
  X(ZOO_AUTH_FAILED_STATE)        \
  X(ZOO_CONNECTED_STATE)          \
  X(ZOO_CONTAINER)                \
  X(ZOO_EPHEMERAL)                \
  X(ZOO_EPHEMERAL_SEQUENTIAL)     \
  X(ZOO_EXPIRED_SESSION_STATE)    \
  X(ZOO_OPEN_ACL_UNSAFE)          \
  X(ZOO_PERSISTENT)               \
  X(ZOO_SESSION_EVENT)

namespace ipclock {

struct ZooKeeperCalls {
  IPCLOCK_ZOOKEEPER_CALLS(IPCLOCK_CLIENT_CALL_MEMBER)
  IPCLOCK_ZOOKEEPER_DATA(IPCLOCK_CLIENT_DATA_MEMBER)
};

// The table. Its calls are null until ZooKeeperLibrary().Load() succeeded.
ZooKeeperCalls& ZooKeeper();
// Loads the library on first use.
ClientLibrary& ZooKeeperLibrary();

}  // namespace ipclock

#endif  // IPCLOCK_HAVE_ZOOKEEPER

#endif  // IPCLOCK_PLATFORM_ZOOKEEPER_CALLS_H_
