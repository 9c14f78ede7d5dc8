// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table of calls into MariaDB Connector/C, for the MySQL/MariaDB stores
// (mysql+advisory://, mysql://): every call ipclock makes into the library goes
// through `Mariadb()`, after `MariadbLibrary().Load()` succeeded
// (platform/client_library.h says why, and how tests replace a call).

#ifndef IPCLOCK_PLATFORM_MARIADB_CALLS_H_
#define IPCLOCK_PLATFORM_MARIADB_CALLS_H_

// Empty in a build without the library, so that code that deals with
// every client library can include each table without an #if.
#include "ipclock_config.h"
#if IPCLOCK_HAVE_MYSQL

#include <mysql.h>

#include "platform/client_library.h"

// The functions ipclock calls, one X(name) each.
#define IPCLOCK_MARIADB_CALLS(X) \
  X(mysql_affected_rows)         \
  X(mysql_close)                 \
  X(mysql_errno)                 \
  X(mysql_error)                 \
  X(mysql_fetch_lengths)         \
  X(mysql_fetch_row)             \
  X(mysql_field_count)           \
  X(mysql_free_result)           \
  X(mysql_get_socket)            \
  X(mysql_get_ssl_cipher)        \
  X(mysql_init)                  \
  X(mysql_num_fields)            \
  X(mysql_optionsv)              \
  X(mysql_read_query_result)     \
  X(mysql_real_connect)          \
  X(mysql_send_query)            \
  X(mysql_server_init)           \
  X(mysql_sqlstate)              \
  X(mysql_store_result)          \
  X(mysql_thread_id)

namespace ipclock {

struct MariadbCalls {
  IPCLOCK_MARIADB_CALLS(IPCLOCK_CLIENT_CALL_MEMBER)
};

// The table. Its calls are null until MariadbLibrary().Load() succeeded.
MariadbCalls& Mariadb();
// Loads the library on first use.
ClientLibrary& MariadbLibrary();

}  // namespace ipclock

#endif  // IPCLOCK_HAVE_MYSQL

#endif  // IPCLOCK_PLATFORM_MARIADB_CALLS_H_
