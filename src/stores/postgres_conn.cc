// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/postgres_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "platform/errors.h"
#include "platform/process_id.h"

namespace ipclock {

namespace {

// libpq's messages span lines and indent with tabs and double spaces.
std::string OneLine(const char* text) {
  if (text == nullptr) return "";
  std::string s = absl::StrReplaceAll(text, {{"\n", " "}, {"\t", " "}});
  absl::RemoveExtraAsciiWhitespace(&s);
  return s;
}

// Waits for `events` on the connection's socket until `until`; false on
// timeout.
bool WaitSocket(PGconn* conn, short events, Deadline until) {
  struct pollfd p = {Libpq().PQsocket(conn), events, 0};
  for (;;) {
    int ms = -1;
    if (!until.is_never()) {
      const absl::Duration left = until.Remaining();
      if (left <= absl::ZeroDuration()) return false;
      ms = static_cast<int>(std::min<int64_t>(
          absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
          INT_MAX));
    }
    int r = poll(&p, 1, ms);
    if (r > 0) return true;
    // A descriptor poll refuses will not get better; libpq reports why.
    if (r < 0 && errno != EINTR) return true;
    if (r == 0 && !until.is_never() && until.has_passed()) return false;
    // EINTR, or a poll that woke a little early: go round.
  }
}

void KeepNotice(void* arg, const PGresult* r) {
  std::string* notice = static_cast<std::string*>(arg);
  const char* severity = Libpq().PQresultErrorField(r, PG_DIAG_SEVERITY);
  *notice = absl::StrCat(severity != nullptr ? severity : "NOTICE", ": ", PgErrorText(r));
}

const std::string& NoNotice() {
  static const std::string* empty = new std::string();
  return *empty;
}

}  // namespace

PgConnection::PgConnection(PGconn* conn) : conn_(conn), pid_(CurrentPid()) {
  if (conn_ != nullptr) {
    notice_ = std::make_unique<std::string>();
    Libpq().PQsetNoticeReceiver(conn_, &KeepNotice, notice_.get());
  }
}

PgConnection::PgConnection(PgConnection&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)),
      pid_(other.pid_),
      notice_(std::move(other.notice_)) {}

PgConnection& PgConnection::operator=(PgConnection&& other) noexcept {
  if (this != &other) {
    Close();
    conn_ = std::exchange(other.conn_, nullptr);
    pid_ = other.pid_;
    notice_ = std::move(other.notice_);
  }
  return *this;
}

const std::string& PgConnection::last_notice() const {
  return notice_ != nullptr ? *notice_ : NoNotice();
}

bool PgConnection::ours() const { return conn_ != nullptr && pid_ == CurrentPid(); }

bool PgConnection::looks_alive() const {
  return conn_ != nullptr && Libpq().PQstatus(conn_) == CONNECTION_OK;
}

void PgConnection::Close() {
  if (conn_ == nullptr) return;
  if (pid_ != CurrentPid()) {
    // A copy inherited through fork(). Point the descriptor number at
    // /dev/null (dup3 swaps it atomically, so no other thread can be handed
    // that number in between): PQfinish's goodbye then goes nowhere and its
    // close() closes only our copy. If /dev/null cannot be opened, leaking
    // the struct is the lesser harm.
    int fd = Libpq().PQsocket(conn_);
    if (fd >= 0) {
      int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd < 0) {
        conn_ = nullptr;
        return;
      }
      int moved;
      do {
        moved = dup3(null_fd, fd, O_CLOEXEC);
      } while (moved < 0 && errno == EINTR);
      close(null_fd);
      if (moved < 0) {
        // The descriptor still reaches the parent's session.
        conn_ = nullptr;
        return;
      }
    }
  }
  Libpq().PQfinish(conn_);
  conn_ = nullptr;
}

absl::StatusOr<PgConnection> PgConnect(
    const std::vector<std::pair<std::string, std::string>>& conninfo,
    absl::string_view describe) {
  std::vector<const char*> keys;
  std::vector<const char*> values;
  for (const auto& [key, value] : conninfo) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PgConnection conn(Libpq().PQconnectdbParams(keys.data(), values.data(), 0));
  if (!conn.valid()) {
    return StoreError(absl::StatusCode::kResourceExhausted, describe, "",
                      "connect: libpq could not allocate a connection");
  }
  if (Libpq().PQstatus(conn.get()) == CONNECTION_OK) return conn;
  // libpq gives no SQLSTATE for a failed connection. That the server asked
  // for a password and the connection still failed is the sign that it
  // refused the credentials; libpq's own message below says exactly why.
  const bool refused =
      Libpq().PQconnectionNeedsPassword(conn.get()) || Libpq().PQconnectionUsedPassword(conn.get());
  return StoreError(
      refused ? absl::StatusCode::kPermissionDenied : absl::StatusCode::kUnavailable,
      describe, "", absl::StrCat("connect: ", PgConnError(conn.get())));
}

absl::StatusOr<PgResult> PgExec(PGconn* conn, const std::string& sql,
                                Deadline reply_by) {
  auto lost = [conn](absl::string_view what) {
    return absl::UnavailableError(
        absl::StrCat(what, ": ", PgConnError(conn)));
  };
  if (Libpq().PQstatus(conn) != CONNECTION_OK) return lost("connection lost");
  if (Libpq().PQsendQuery(conn, sql.c_str()) == 0) return lost("send");
  // In libpq's nonblocking mode (a caller's connection may be in it) the
  // query may still sit in libpq's buffer.
  for (;;) {
    int f = Libpq().PQflush(conn);
    if (f == 0) break;
    if (f < 0) return lost("send");
    if (!WaitSocket(conn, POLLOUT, reply_by)) {
      return absl::UnavailableError("no progress sending a query to the server");
    }
  }
  PgResult decisive;
  // A terminated session sends its error (FATAL, "terminating connection
  // due to administrator command") and then closes the socket: report the
  // loss, in the server's words when it gave some, since the session is
  // gone. libpq's own text then only guesses ("terminated abnormally").
  auto gone = [&]() {
    if (decisive != nullptr && PgFailed(decisive.get())) {
      const char* severity = Libpq().PQresultErrorField(decisive.get(), PG_DIAG_SEVERITY);
      return absl::UnavailableError(absl::StrCat(
          "the server ended the session: ", severity != nullptr ? severity : "ERROR", ": ",
          PgErrorText(decisive.get()), "; then it closed the connection"));
    }
    return lost("connection lost");
  };
  for (;;) {
    while (Libpq().PQisBusy(conn) != 0) {
      if (!WaitSocket(conn, POLLIN, reply_by)) {
        return absl::UnavailableError(
            "the server sent no reply in time (network or server down?)");
      }
      if (Libpq().PQconsumeInput(conn) == 0) return gone();
    }
    PgResult r(Libpq().PQgetResult(conn));
    if (r == nullptr) break;
    if (decisive == nullptr || !PgFailed(decisive.get())) decisive = std::move(r);
  }
  if (Libpq().PQstatus(conn) != CONNECTION_OK) return gone();
  if (decisive == nullptr) return absl::InternalError("the server sent no result");
  return decisive;
}

bool PgConsumeInput(PGconn* conn) {
  if (Libpq().PQstatus(conn) != CONNECTION_OK) return false;
  // The first read may stop at the end of an error message whose
  // connection close is right behind it: read twice. PQisBusy() hands what
  // was read to the notice receiver.
  for (int i = 0; i < 2; ++i) {
    if (Libpq().PQconsumeInput(conn) == 0) return false;
    Libpq().PQisBusy(conn);
  }
  return Libpq().PQstatus(conn) == CONNECTION_OK;
}

bool PgFailed(const PGresult* r) {
  ExecStatusType s = Libpq().PQresultStatus(r);
  return s == PGRES_FATAL_ERROR || s == PGRES_BAD_RESPONSE ||
         s == PGRES_NONFATAL_ERROR;
}

std::string PgSqlState(const PGresult* r) {
  const char* s = Libpq().PQresultErrorField(r, PG_DIAG_SQLSTATE);
  return s != nullptr ? s : "";
}

std::string PgErrorText(const PGresult* r) {
  const char* primary = Libpq().PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
  std::string text =
      primary != nullptr ? OneLine(primary) : OneLine(Libpq().PQresultErrorMessage(r));
  std::string state = PgSqlState(r);
  if (!state.empty()) absl::StrAppend(&text, " [SQLSTATE ", state, "]");
  return text;
}

std::string PgConnError(const PGconn* conn) {
  std::string s = OneLine(Libpq().PQerrorMessage(conn));
  return s.empty() ? "no reason given" : s;
}

}  // namespace ipclock
