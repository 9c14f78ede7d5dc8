// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table of calls into hiredis, for the redis store (redis://): every call
// ipclock makes into the library goes through `Hiredis()`, after
// `HiredisLibrary().Load()` succeeded (platform/client_library.h says why, and
// how tests replace a call).

#ifndef IPCLOCK_PLATFORM_HIREDIS_CALLS_H_
#define IPCLOCK_PLATFORM_HIREDIS_CALLS_H_

// Empty in a build without the library, so that code that deals with
// every client library can include each table without an #if.
#include "ipclock_config.h"
#if IPCLOCK_HAVE_REDIS

// hiredis's sds.h has C flexible array members, which -Wpedantic rejects in
// C++; the header is not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <hiredis.h>
#pragma GCC diagnostic pop

#include "platform/client_library.h"

// The functions ipclock calls, one X(name) each.
#define IPCLOCK_HIREDIS_CALLS(X) \
  X(freeReplyObject)             \
  X(redisConnect)                \
  X(redisConnectUnix)            \
  X(redisConnectUnixWithTimeout) \
  X(redisConnectWithTimeout)     \
  X(redisEnableKeepAlive)        \
  X(redisFree)                   \
  X(redisGetReply)               \
  X(redisGetReplyFromReader)     \
  X(redisReaderFeed)             \
  X(redisSetTimeout)

namespace ipclock {

struct HiredisCalls {
  IPCLOCK_HIREDIS_CALLS(IPCLOCK_CLIENT_CALL_MEMBER)
};

// The table. Its calls are null until HiredisLibrary().Load() succeeded.
HiredisCalls& Hiredis();
// Loads the library on first use.
ClientLibrary& HiredisLibrary();

}  // namespace ipclock

#endif  // IPCLOCK_HAVE_REDIS

#endif  // IPCLOCK_PLATFORM_HIREDIS_CALLS_H_
