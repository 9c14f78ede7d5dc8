// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The MariaDB Connector/C calls shared by the MySQL advisory store and the
// table store on MySQL/MariaDB: connections that know which process opened
// them, and queries whose reply is awaited with poll(2) up to a deadline.
//
// Connector/C only blocks (its non-blocking API switches stacks, which the
// sanitizers cannot follow), so a query is sent with mysql_send_query(),
// the socket is polled until the reply starts to arrive or the deadline
// passes, and only then is the reply read. A GET_LOCK that waits 30 s on the
// server is thus a 30 s poll here, and a server that stopped answering is
// noticed at the deadline rather than never. Each read of a reply that has
// started is bounded by the connection's read timeout.

#ifndef IPCLOCK_STORES_MYSQL_CONN_H_
#define IPCLOCK_STORES_MYSQL_CONN_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/store_errors.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/stores/mysql_store.h"
#include "platform/mariadb_calls.h"
#include "stores/connections/session_handle.h"

namespace ipclock {

struct MyClient {
  static int Socket(MYSQL* conn);
  static void Close(MYSQL* conn);  // mysql_close(): COM_QUIT, and the memory
};

// An owned MYSQL handle. Closing it ends the server session, which releases
// every named lock (GET_LOCK) taken on it; in a forked child, closing it
// says nothing to the server (stores/connections/session_handle.h).
class MyConnection : public SessionHandle<MYSQL, MyClient> {
 public:
  using SessionHandle::SessionHandle;

  // The session's id on the server (CONNECTION_ID()), as of the connect.
  uint64_t session_id() const;
  int socket() const { return valid() ? MyClient::Socket(get()) : -1; }
  // Whether the session is up as far as can be told without a round trip:
  // ours, and the server has sent nothing unasked. A server ends a session
  // (KILL, shutdown) by sending an error packet and closing the socket.
  bool looks_alive() const;
};

// Opens a connection (blocking, bounded by connect_timeout) with utf8mb4,
// no automatic reconnect (a silent reconnect would be a new session without
// our locks), CLIENT_FOUND_ROWS (an UPDATE counts the rows it matched, not
// only those it changed), no LOCAL INFILE, and TCP keepalive. `describe`
// names the store in messages; they carry the connector's reason, never the
// password. PermissionDenied when the server refused the credentials or the
// database, NotFound for a database that does not exist, else Unavailable.
// `session_setup` statements (SET SESSION ...) run once after the connect.
absl::StatusOr<MyConnection> MyConnect(const MysqlConnectionOptions& options,
                                       const std::vector<std::string>& session_setup,
                                       absl::string_view describe);

// How long a statement that does not wait on a lock may take to answer, and
// each read or write of the connector, before the server counts as
// unreachable.
inline constexpr int kMyIoTimeoutSeconds = 10;

// A statement's outcome as the server gave it.
struct MyResult {
  // The server's error number (1062, 1146, ...) and SQLSTATE; 0 on success.
  unsigned error = 0;
  std::string sqlstate;
  std::string message;
  // Rows the statement matched (CLIENT_FOUND_ROWS), for statements without
  // a result set.
  uint64_t affected_rows = 0;
  // The result set; a NULL is nullopt.
  std::vector<std::vector<std::optional<std::string>>> rows;

  bool failed() const { return error != 0; }
  // "message [ER 1062, SQLSTATE 23000]", for error messages.
  std::string ErrorText() const;
};

// Runs one statement on `conn`. Unavailable when the session is gone (the
// server ended it, the connection broke) or no reply had come by `reply_by`:
// the session is then in an unknown state and the caller should close it.
// Otherwise the result, which may carry a server error.
absl::StatusOr<MyResult> MyQuery(MyConnection& conn, absl::string_view sql,
                                 Deadline reply_by);

// `bytes` as a MySQL hexadecimal literal converted to utf8mb4
// (CONVERT(X'...' USING utf8mb4)): any bytes, no quoting to get wrong, and
// the same string whatever the connection's character set.
std::string MyUtf8Literal(absl::string_view bytes);

// The MySQL stores' one classification of the connector's and the server's
// error numbers, in the classes of ipclock/errors.h: refused credentials
// and hosts are refused; no such database, a name too long, TLS that was
// required and failed are configuration; too many connections, lock waits
// and deadlocks, a lost or unreachable server are transient; the rest is
// `otherwise` (Internal; a failed connect takes that for transient).
StoreErrorMaker MyFaultOf(unsigned error, StoreErrorMaker otherwise = UnexpectedError);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_MYSQL_CONN_H_
