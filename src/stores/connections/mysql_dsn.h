// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Where a MySQL/MariaDB DSN says the server is, for the advisory store
// (`mysql+advisory://`) and the table store (`mysql://`, `mysql:host=...`).

#ifndef IPCLOCK_STORES_MYSQL_DSN_H_
#define IPCLOCK_STORES_MYSQL_DSN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dsn.h"
#include "ipclock/stores/mysql_store.h"

namespace ipclock {

// Reads the server, the credentials and the connection options from `dsn`,
// taking the options it knows (`unix_socket`, `connect_timeout`, `ssl_mode`,
// `ssl_ca`; `user` and `password` in the PDO form) and leaving the rest.
//
//   URL:  SCHEME://user:password@host:port/db?unix_socket=/path
//   PDO:  mysql:host=H;port=P;dbname=D;unix_socket=/path;charset=utf8mb4
//         with ?user=U&password=P (PDO passes credentials apart from the
//         DSN; a password inside the PDO part would not be redacted from
//         messages, so it is refused there).
absl::StatusOr<MysqlConnectionOptions> MysqlConnectionFromDsn(Dsn& dsn);

// ipclock's check of `options` before the connector sees them: the Unix
// socket's path and type, the CA file's, `ssl_mode=verify_identity` with a
// CA file (core/named_file.h). `where` starts messages.
absl::Status CheckMysqlConnection(const MysqlConnectionOptions& options,
                                  absl::string_view where);

// The server as messages name it, never with the password:
// "SCHEME://user@host:port/db" or "SCHEME://user@localhost/db?unix_socket=...".
std::string DescribeMysql(absl::string_view scheme,
                          const MysqlConnectionOptions& options);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_MYSQL_DSN_H_
