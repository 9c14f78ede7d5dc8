// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The libpq calls shared by the postgres store and PostgresTransactionLock:
// connections that know which process opened them, and queries whose reply
// is awaited with poll(2) up to a deadline rather than in a blocking read.

#ifndef IPCLOCK_STORES_POSTGRES_CONN_H_
#define IPCLOCK_STORES_POSTGRES_CONN_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/spi/deadline.h"
#include "platform/libpq_calls.h"
#include "stores/connections/session_handle.h"

namespace ipclock {

struct PgResultDeleter {
  void operator()(PGresult* r) const { Libpq().PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

struct PgClient {
  static int Socket(PGconn* conn);
  static void Close(PGconn* conn);  // PQfinish(): Terminate, and the memory
};

// An owned PGconn. Closing it ends the server session, which releases every
// advisory session lock taken on it; in a forked child, closing it says
// nothing to the server (stores/connections/session_handle.h).
//
// Notices the server sends (a WARNING from pg_advisory_unlock, the FATAL a
// session gets just before the server ends it) are kept as `last_notice()`
// instead of going to stderr, libpq's default: a library does not write to
// the program's stderr, and the text says why a session ended.
class PgConnection : public SessionHandle<PGconn, PgClient> {
 public:
  PgConnection() = default;
  explicit PgConnection(PGconn* conn);
  PgConnection(PgConnection&&) = default;
  PgConnection& operator=(PgConnection&&) = default;
  // Closes before `notice_`, which libpq may still write to, goes.
  ~PgConnection() { Close(); }

  // Whether libpq still thinks the connection is up. Costs nothing, and
  // learns of a dead server only from the last call that touched the socket.
  bool looks_alive() const;
  // The last notice or warning the server sent on this connection, on one
  // line with its severity ("FATAL: terminating connection due to
  // administrator command [SQLSTATE 57P01]"); "" if none.
  const std::string& last_notice() const;

 private:
  // Where libpq's notice receiver writes; on the heap so that its address
  // survives moves.
  std::unique_ptr<std::string> notice_;
};

// Opens a connection (blocking, bounded by the `connect_timeout` keyword
// times the number of hosts). `describe` names the store in messages, which
// carry libpq's reason (it names host and port, never the password). The
// failure is classed as ipclock/errors.h says: by the SQLSTATE of a server
// that answered (PgFaultOf(): refused credentials PermissionDenied, no such
// database InvalidArgument, too many connections or a server starting
// Unavailable), InvalidArgument for options libpq refused and for TLS that
// was required and could not be had, PermissionDenied when a password was
// needed and none given, else Unavailable.
absl::StatusOr<PgConnection> PgConnect(
    const std::vector<std::pair<std::string, std::string>>& conninfo,
    absl::string_view describe);

// Sends `sql` (one or more statements, no parameters) and collects its
// results. Returns the first error result if a statement failed (check with
// PgFailed), else the last result. Unavailable when the connection broke or
// no reply had come by `reply_by`; the session is then in an unknown state
// and the caller should close it.
absl::StatusOr<PgResult> PgExec(PGconn* conn, const std::string& sql,
                                Deadline reply_by);

// Reads, without waiting, what the server sent without being asked (a
// notice, a parameter change, the error a session gets just before the
// server ends it), so that the socket is not left readable. False when that
// showed the connection closed: PQstatus() is then CONNECTION_BAD, and
// PgConnError() says why. Call it only between queries.
bool PgConsumeInput(PGconn* conn);

// Whether `r` reports a failed statement.
bool PgFailed(const PGresult* r);
// The SQLSTATE of a failed statement ("55P03"), or "".
std::string PgSqlState(const PGresult* r);
// The server's primary message with its SQLSTATE, for error messages.
std::string PgErrorText(const PGresult* r);
// libpq's last error on `conn`, on one line.
std::string PgConnError(const PGconn* conn);

// SQLSTATEs the store and the transaction lock act on.
inline constexpr absl::string_view kLockNotAvailable = "55P03";
inline constexpr absl::string_view kDeadlockDetected = "40P01";

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSTGRES_CONN_H_
