// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/connections/mysql_conn.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <unistd.h>

#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/platform_deadline.h"
#include "core/store_errors.h"
#include "ipclock/errors.h"
#include "platform/descriptors.h"
#include "platform/errors.h"
#include "platform/sigpipe_block.h"
#include "platform/socket_wait.h"
#include "platform/process_id.h"

namespace ipclock {

namespace {

// Keepalive probes as the postgres store sends them: a dead network or
// server host is noticed within about 25 s of silence.
constexpr int kKeepaliveIdle = 10;
constexpr int kKeepaliveInterval = 5;
constexpr int kKeepaliveCount = 3;

// mysql_library_init is not thread-safe, and mysql_init() calls it on first
// use: once here, before any connection. (mysql_library_init is a macro for
// mysql_server_init, the symbol the table has.)
void EnsureLibrary() {
  static std::once_flag once;
  std::call_once(once, [] { Mariadb().mysql_server_init(0, nullptr, nullptr); });
}

std::string OneLine(const char* text) {
  if (text == nullptr) return "";
  std::string s = absl::StrReplaceAll(text, {{"\n", " "}, {"\t", " "}});
  absl::StripAsciiWhitespace(&s);
  return s;
}

// Errors after which the session is gone: every client-side error (the
// connector's 2000-2999: lost connection, server gone, out of sync), and
// the server's own reports of ending the session.
bool SessionGone(unsigned error) {
  return (error >= CR_MIN_ERROR && error <= CR_MAX_ERROR) ||
         error == ER_CONNECTION_KILLED || error == ER_SERVER_SHUTDOWN ||
         (error >= ER_NET_PACKET_TOO_LARGE && error <= ER_NET_WRITE_INTERRUPTED);
}

std::string ConnError(MYSQL* conn) {
  std::string text = OneLine(Mariadb().mysql_error(conn));
  if (text.empty()) text = "no reason given";
  return absl::StrCat(text, " [ER ", Mariadb().mysql_errno(conn), "]");
}

}  // namespace

int MyClient::Socket(MYSQL* conn) { return static_cast<int>(Mariadb().mysql_get_socket(conn)); }

void MyClient::Close(MYSQL* conn) {
  // COM_QUIT, and under TLS OpenSSL's close_notify, to a server that may
  // have gone.
  std::optional<SigpipeBlock> quiet;
  if (Mariadb().mysql_get_ssl_cipher(conn) != nullptr) quiet.emplace();
  Mariadb().mysql_close(conn);
}

uint64_t MyConnection::session_id() const {
  return valid() ? Mariadb().mysql_thread_id(get()) : 0;
}

bool MyConnection::looks_alive() const {
  if (!ours()) return false;
  const int fd = socket();
  return fd >= 0 && !HasPendingInput(fd);
}

absl::StatusOr<MyConnection> MyConnect(const MysqlConnectionOptions& endpoint,
                                       const std::vector<std::string>& session_setup,
                                       absl::string_view describe) {
  EnsureLibrary();
  MyConnection conn(Mariadb().mysql_init(nullptr));
  if (!conn.valid()) {
    return OutOfResourcesError(describe, "",
                               "connect: the connector could not allocate a connection");
  }
  MYSQL* m = conn.get();
  const unsigned int connect_timeout =
      static_cast<unsigned int>(endpoint.connect_timeout_seconds);
  const unsigned int io_timeout = kMyIoTimeoutSeconds;
  const my_bool off = 0;
  const my_bool on = 1;
  const unsigned int no_infile = 0;
  Mariadb().mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
  Mariadb().mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &io_timeout);
  Mariadb().mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
  Mariadb().mysql_optionsv(m, MYSQL_OPT_RECONNECT, &off);
  Mariadb().mysql_optionsv(m, MYSQL_OPT_LOCAL_INFILE, &no_infile);
  Mariadb().mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (endpoint.tls != MysqlConnectionOptions::Tls::kDisabled) {
    Mariadb().mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &on);
  }
  if (endpoint.tls == MysqlConnectionOptions::Tls::kVerifyIdentity) {
    Mariadb().mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
    if (!endpoint.tls_ca.empty()) {
      Mariadb().mysql_optionsv(m, MYSQL_OPT_SSL_CA, endpoint.tls_ca.c_str());
    }
  }
  // The connector takes a Unix socket only with host "localhost" (or none).
  const bool local = !endpoint.unix_socket.empty();
  const char* host = local ? "localhost" : endpoint.host.c_str();
  if (Mariadb().mysql_real_connect(
          m, host, endpoint.user.empty() ? nullptr : endpoint.user.c_str(),
          endpoint.password ? endpoint.password->c_str() : nullptr,
          endpoint.database.empty() ? nullptr : endpoint.database.c_str(),
          local ? 0 : static_cast<unsigned int>(endpoint.port),
          local ? endpoint.unix_socket.c_str() : nullptr, CLIENT_FOUND_ROWS) == nullptr) {
    // A connect that failed for a reason MyFaultOf() does not know is
    // taken for a server that cannot be reached now.
    return MyFaultOf(Mariadb().mysql_errno(m), TransientError)(
        describe, "", absl::StrCat("connect: ", ConnError(m)));
  }
  // Connector/C 3.3 honours MYSQL_OPT_SSL_ENFORCE only together with
  // certificate verification, and otherwise goes on in plain text with a
  // server that offers no TLS: whether TLS was agreed is checked here.
  if (endpoint.tls != MysqlConnectionOptions::Tls::kDisabled &&
      Mariadb().mysql_get_ssl_cipher(m) == nullptr) {
    return ConfigurationError(describe, "",
                              "connect: TLS is required (ssl_mode) and the server did not "
                              "agree to it");
  }
  // Connector/C does not make its socket close-on-exec: a child that
  // inherited it would keep the session, and its advisory locks, alive
  // after we died (platform/descriptors.h).
  SetCloseOnExec(conn.socket());
  SetTcpKeepalive(conn.socket(), kKeepaliveIdle, kKeepaliveInterval, kKeepaliveCount);
  MyConnection out = std::move(conn);
  for (const std::string& sql : session_setup) {
    absl::StatusOr<MyResult> r =
        MyQuery(out, sql, Deadline::In(absl::Seconds(kMyIoTimeoutSeconds)));
    if (!r.ok()) {
      return TransientError(describe, "",
                            absl::StrCat("set up a new session: ", r.status().message()));
    }
    if (r->failed()) {
      return MyFaultOf(r->error)(
          describe, "", absl::StrCat("set up a new session (", sql, "): ", r->ErrorText()));
    }
  }
  return out;
}

absl::StatusOr<MyResult> MyQuery(MyConnection& conn, absl::string_view sql,
                                 Deadline reply_by) {
  if (!conn.ours()) {
    return MisuseError(
        "the connection belongs to the process that opened it");
  }
  MYSQL* m = conn.get();
  const int fd = conn.socket();
  if (fd < 0) return TransientError("connection lost: no socket");
  if (HasPendingInput(fd)) {
    // Nothing was asked, so whatever came is the server ending the session
    // (an administrator's KILL, a shutdown or restart) or a closed socket.
    return TransientError(
        "connection lost: the server ended the session unasked (it was killed, "
        "or the server shut down) or the connection broke");
  }
  int sent;
  {
    // The connector's own sends say MSG_NOSIGNAL; OpenSSL's, under a TLS
    // connection, do not.
    std::optional<SigpipeBlock> quiet;
    if (Mariadb().mysql_get_ssl_cipher(m) != nullptr) quiet.emplace();
    sent = Mariadb().mysql_send_query(m, sql.data(), static_cast<unsigned long>(sql.size()));
  }
  if (sent != 0) return TransientError(absl::StrCat("send: ", ConnError(m)));
  if (WaitSocket(fd, /*for_write=*/false, ForPlatform(reply_by)) == SocketWait::kTimeout) {
    return TransientError(
        "the server sent no reply in time (network or server down?)");
  }
  MyResult out;
  if (Mariadb().mysql_read_query_result(m) != 0) {
    out.error = Mariadb().mysql_errno(m);
    if (SessionGone(out.error)) {
      return TransientError(absl::StrCat("connection lost: ", ConnError(m)));
    }
    out.sqlstate = Mariadb().mysql_sqlstate(m);
    out.message = OneLine(Mariadb().mysql_error(m));
    return out;
  }
  if (Mariadb().mysql_field_count(m) == 0) {
    out.affected_rows = Mariadb().mysql_affected_rows(m);
    return out;
  }
  MYSQL_RES* res = Mariadb().mysql_store_result(m);
  if (res == nullptr) {
    // An error found while the rows were made (a lock name too long for
    // GET_LOCK) comes here, after the columns.
    out.error = Mariadb().mysql_errno(m);
    if (out.error == 0 || SessionGone(out.error)) {
      return TransientError(absl::StrCat("read a result: ", ConnError(m)));
    }
    out.sqlstate = Mariadb().mysql_sqlstate(m);
    out.message = OneLine(Mariadb().mysql_error(m));
    return out;
  }
  const unsigned int fields = Mariadb().mysql_num_fields(res);
  while (MYSQL_ROW row = Mariadb().mysql_fetch_row(res)) {
    const unsigned long* lengths = Mariadb().mysql_fetch_lengths(res);
    std::vector<std::optional<std::string>> values;
    values.reserve(fields);
    for (unsigned int i = 0; i < fields; ++i) {
      if (row[i] == nullptr) {
        values.emplace_back(std::nullopt);
      } else {
        values.emplace_back(std::string(row[i], lengths[i]));
      }
    }
    out.rows.push_back(std::move(values));
  }
  Mariadb().mysql_free_result(res);
  return out;
}

std::string MyResult::ErrorText() const {
  return absl::StrCat(message.empty() ? "no reason given" : message, " [ER ", error,
                      sqlstate.empty() ? "" : ", SQLSTATE ", sqlstate, "]");
}

std::string MyUtf8Literal(absl::string_view bytes) {
  return absl::StrCat("CONVERT(X'", absl::BytesToHexString(bytes), "' USING utf8mb4)");
}

StoreErrorMaker MyFaultOf(unsigned error, StoreErrorMaker otherwise) {
  switch (error) {
    case ER_DBACCESS_DENIED_ERROR:
    case ER_ACCESS_DENIED_ERROR:
    case ER_TABLEACCESS_DENIED_ERROR:
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:
    case ER_ACCESS_DENIED_NO_PASSWORD_ERROR:
    case ER_HOST_NOT_PRIVILEGED:
    case ER_HOST_IS_BLOCKED:
      return RefusedError;
    // A name the server never accepts, or a database, table or column that
    // is not there (PostgreSQL's SQLSTATE class 42); TLS that was required
    // and failed (a server without it, a certificate that does not verify).
    case ER_TOO_LONG_IDENT:
    case ER_BAD_DB_ERROR:
    case ER_WRONG_DB_NAME:
    case ER_WRONG_TABLE_NAME:
    case ER_NO_SUCH_TABLE:
    case ER_BAD_FIELD_ERROR:
    case CR_SSL_CONNECTION_ERROR:
      return ConfigurationError;
    case ER_CON_COUNT_ERROR:
    case ER_TOO_MANY_USER_CONNECTIONS:
    case ER_LOCK_WAIT_TIMEOUT:
    case ER_LOCK_DEADLOCK:
    case ER_QUERY_INTERRUPTED:
      return TransientError;
    default:
      if (SessionGone(error)) return TransientError;
      return otherwise;
  }
}

}  // namespace ipclock
