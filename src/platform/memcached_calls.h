// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table of calls into libmemcached, for the memcached store (memcached://):
// every call ipclock makes into the library goes through `Memcached()`, after
// `MemcachedLibrary().Load()` succeeded (platform/client_library.h says why,
// and how tests replace a call).

#ifndef IPCLOCK_PLATFORM_MEMCACHED_CALLS_H_
#define IPCLOCK_PLATFORM_MEMCACHED_CALLS_H_

// Empty in a build without the library, so that code that deals with
// every client library can include each table without an #if.
#include "ipclock_config.h"
#if IPCLOCK_HAVE_MEMCACHED

#include <libmemcached/memcached.h>

#include "platform/client_library.h"

// The functions ipclock calls, one X(name) each.
#define IPCLOCK_MEMCACHED_CALLS(X)                \
  X(memcached_add)                                \
  X(memcached_behavior_set)                       \
  X(memcached_callback_set)                       \
  X(memcached_cas)                                \
  X(memcached_create)                             \
  X(memcached_delete)                             \
  X(memcached_fetch_result)                       \
  X(memcached_free)                               \
  X(memcached_last_error_errno)                   \
  X(memcached_mget)                               \
  X(memcached_result_cas)                         \
  X(memcached_result_free)                        \
  X(memcached_result_key_length)                  \
  X(memcached_result_key_value)                   \
  X(memcached_result_length)                      \
  X(memcached_result_value)                       \
  X(memcached_server_add_unix_socket_with_weight) \
  X(memcached_server_add_with_weight)             \
  X(memcached_server_by_key)                      \
  X(memcached_server_count)                       \
  X(memcached_server_error_return)                \
  X(memcached_server_instance_by_position)        \
  X(memcached_server_name)                        \
  X(memcached_server_port)                        \
  X(memcached_strerror)                           \
  X(memcached_version)

namespace ipclock {

struct MemcachedCalls {
  IPCLOCK_MEMCACHED_CALLS(IPCLOCK_CLIENT_CALL_MEMBER)
};

// The table. Its calls are null until MemcachedLibrary().Load() succeeded.
MemcachedCalls& Memcached();
// Loads the library on first use.
ClientLibrary& MemcachedLibrary();

}  // namespace ipclock

#endif  // IPCLOCK_HAVE_MEMCACHED

#endif  // IPCLOCK_PLATFORM_MEMCACHED_CALLS_H_
