// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table of calls into libpq, for the PostgreSQL stores
// (postgresql+advisory://, postgresql://): every call ipclock makes into the
// library goes through `Libpq()`, after `LibpqLibrary().Load()` succeeded
// (platform/client_library.h says why, and how tests replace a call).

#ifndef IPCLOCK_PLATFORM_LIBPQ_CALLS_H_
#define IPCLOCK_PLATFORM_LIBPQ_CALLS_H_

// Empty in a build without the library, so that code that deals with
// every client library can include each table without an #if.
#include "ipclock_config.h"
#if IPCLOCK_HAVE_POSTGRES

#include <libpq-fe.h>

#include "platform/client_library.h"

// The functions ipclock calls, one X(name) each.
#define IPCLOCK_LIBPQ_CALLS(X) \
  X(PQbackendPID)              \
  X(PQclear)                   \
  X(PQcmdTuples)               \
  X(PQconndefaults)            \
  X(PQconninfoFree)            \
  X(PQconnectPoll)             \
  X(PQconnectStartParams)      \
  X(PQconnectionNeedsPassword) \
  X(PQconsumeInput)            \
  X(PQerrorMessage)            \
  X(PQescapeLiteral)           \
  X(PQfinish)                  \
  X(PQflush)                   \
  X(PQfreemem)                 \
  X(PQgetResult)               \
  X(PQgetlength)               \
  X(PQgetvalue)                \
  X(PQhost)                    \
  X(PQisBusy)                  \
  X(PQnfields)                 \
  X(PQntuples)                 \
  X(PQport)                    \
  X(PQresultErrorField)        \
  X(PQresultErrorMessage)      \
  X(PQresultStatus)            \
  X(PQsendQuery)               \
  X(PQserverVersion)           \
  X(PQsetErrorVerbosity)       \
  X(PQsetNoticeReceiver)       \
  X(PQsocket)                  \
  X(PQstatus)                  \
  X(PQtransactionStatus)

namespace ipclock {

struct LibpqCalls {
  IPCLOCK_LIBPQ_CALLS(IPCLOCK_CLIENT_CALL_MEMBER)
};

// The table. Its calls are null until LibpqLibrary().Load() succeeded.
LibpqCalls& Libpq();
// Loads the library on first use.
ClientLibrary& LibpqLibrary();

}  // namespace ipclock

#endif  // IPCLOCK_HAVE_POSTGRES

#endif  // IPCLOCK_PLATFORM_LIBPQ_CALLS_H_
