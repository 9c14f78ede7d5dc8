// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/memcached_calls.h"

#include "ipclock_config.h"

namespace ipclock {

IPCLOCK_CLIENT_LIBRARY(MemcachedCalls, Memcached, MemcachedLibrary,
                       "the memcached client library (libmemcached)",
                       IPCLOCK_MEMCACHED_SONAME, IPCLOCK_MEMCACHED_PACKAGE, "memcached",
                       "the memcached store (memcached://)",
                       IPCLOCK_MEMCACHED_CALLS(IPCLOCK_CLIENT_SLOT))

}  // namespace ipclock
