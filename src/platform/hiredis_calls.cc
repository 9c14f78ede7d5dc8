// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/hiredis_calls.h"

#include "ipclock_config.h"

namespace ipclock {

IPCLOCK_CLIENT_LIBRARY(HiredisCalls, Hiredis, HiredisLibrary,
                       "the Redis client library (hiredis)",
                       IPCLOCK_HIREDIS_SONAME, IPCLOCK_HIREDIS_PACKAGE, "redis",
                       "the redis store (redis://)",
                       IPCLOCK_HIREDIS_CALLS(IPCLOCK_CLIENT_SLOT))

}  // namespace ipclock
