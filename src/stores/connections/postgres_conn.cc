// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/connections/postgres_conn.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "core/platform_deadline.h"
#include "core/store_errors.h"
#include "ipclock/errors.h"
#include "platform/errors.h"
#include "platform/process_id.h"
#include "platform/socket_wait.h"
#include "stores/connections/postgres_dsn.h"

namespace ipclock {

namespace {

// libpq's messages span lines and indent with tabs and double spaces.
std::string OneLine(const char* text) {
  if (text == nullptr) return "";
  std::string s = absl::StrReplaceAll(text, {{"\n", " "}, {"\t", " "}});
  absl::RemoveExtraAsciiWhitespace(&s);
  return s;
}

// Waits until the connection's socket is writable (`for_write`) or
// readable, or is in error (libpq's next call says why); false when `until`
// passes first.
bool WaitConnection(PGconn* conn, bool for_write, Deadline until) {
  return WaitSocket(Libpq().PQsocket(conn), for_write, ForPlatform(until)) ==
         SocketWait::kReady;
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

int PgClient::Socket(PGconn* conn) { return Libpq().PQsocket(conn); }

void PgClient::Close(PGconn* conn) { Libpq().PQfinish(conn); }

PgConnection::PgConnection(PGconn* conn) : SessionHandle(conn) {
  if (conn != nullptr) {
    notice_ = std::make_unique<std::string>();
    Libpq().PQsetNoticeReceiver(conn, &KeepNotice, notice_.get());
  }
}

const std::string& PgConnection::last_notice() const {
  return notice_ != nullptr ? *notice_ : NoNotice();
}

bool PgConnection::looks_alive() const {
  return valid() && Libpq().PQstatus(get()) == CONNECTION_OK;
}

namespace {

// libpq's message for a failed connection, on one line, without the
// LOCATION line of verbose server errors; `sqlstate` gets the SQLSTATE a
// server error carries ("FATAL:  3D000: database ... does not exist").
std::string ConnectFailure(const PGconn* conn, std::string* sqlstate) {
  std::string text = Libpq().PQerrorMessage(conn) != nullptr ? Libpq().PQerrorMessage(conn) : "";
  if (size_t at = text.find("\nLOCATION:"); at != std::string::npos) text.resize(at);
  text = OneLine(text.c_str());
  // OneLine() made the server's "FATAL:  3D000: " into "FATAL: 3D000: ".
  for (size_t at = text.find(": "); at != std::string::npos; at = text.find(": ", at + 1)) {
    absl::string_view rest = absl::string_view(text).substr(at + 2);
    // Five digits and capitals, a digit among them (the severity before it,
    // "FATAL", has none).
    if (rest.size() > 7 && rest[5] == ':' && rest[6] == ' ' &&
        rest.substr(0, 5).find_first_not_of("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") ==
            absl::string_view::npos &&
        rest.substr(0, 5).find_first_of("0123456789") != absl::string_view::npos) {
      *sqlstate = std::string(rest.substr(0, 5));
      text = absl::StrCat(text.substr(0, at + 2), rest.substr(7), " [SQLSTATE ", *sqlstate, "]");
      break;
    }
  }
  return text.empty() ? "no reason given" : text;
}

// What libpq reports in its own words (no SQLSTATE) about TLS that was
// required and could not be had: a server without TLS, a certificate that
// fails verification or cannot be read. Permanent; a TLS connection cut
// short ("SSL SYSCALL error") is not among them.
bool TlsRefused(absl::string_view message) {
  return absl::StrContains(message, "does not support SSL") ||
         absl::StrContains(message, "certificate") ||
         (absl::StrContains(message, "SSL error") && !absl::StrContains(message, "SYSCALL"));
}

}  // namespace

absl::StatusOr<PgConnection> PgConnect(
    const std::vector<std::pair<std::string, std::string>>& conninfo,
    absl::string_view describe) {
  std::vector<const char*> keys;
  std::vector<const char*> values;
  int64_t timeout_seconds = 0;
  size_t hosts = 1;
  for (const auto& [key, value] : conninfo) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
    if (key == "connect_timeout" && !absl::SimpleAtoi(value, &timeout_seconds)) {
      timeout_seconds = 0;  // CheckPgConninfo() refuses such a value first
    }
    if (key == "host") hosts = static_cast<size_t>(std::count(value.begin(), value.end(), ',')) + 1;
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  // Started without blocking, so that server errors can be asked for with
  // their SQLSTATE before the server sends any: the SQLSTATE classes them.
  PgConnection conn(Libpq().PQconnectStartParams(keys.data(), values.data(), 0));
  if (!conn.valid()) {
    return OutOfResourcesError(describe, "",
                               "connect: libpq could not allocate a connection");
  }
  PGconn* c = conn.get();
  bool timed_out = false;
  if (Libpq().PQstatus(c) != CONNECTION_BAD) {
    Libpq().PQsetErrorVerbosity(c, PQERRORS_VERBOSE);
    // libpq's connect_timeout bounds each host's attempt in its blocking
    // connect only; here it bounds all of them together.
    const Deadline deadline =
        timeout_seconds > 0
            ? Deadline::In(absl::Seconds(std::max<int64_t>(timeout_seconds, 2)) *
                           static_cast<int64_t>(hosts))
            : Deadline::Never();
    PostgresPollingStatusType polled = PGRES_POLLING_WRITING;
    while (polled != PGRES_POLLING_OK && polled != PGRES_POLLING_FAILED) {
      if (!WaitConnection(c, polled != PGRES_POLLING_READING, deadline)) {
        timed_out = true;
        break;
      }
      polled = Libpq().PQconnectPoll(c);
    }
  }
  if (!timed_out && Libpq().PQstatus(c) == CONNECTION_OK) {
    Libpq().PQsetErrorVerbosity(c, PQERRORS_DEFAULT);
    return conn;
  }
  if (timed_out) {
    return TransientError(describe, "",
                          absl::StrCat("connect: no answer within connect_timeout (",
                                       timeout_seconds, " s per host)"));
  }
  // The one classification of a failed connection (ipclock/errors.h).
  std::string sqlstate;
  const std::string why = ConnectFailure(c, &sqlstate);
  StoreErrorMaker fault = TransientError;
  if (Libpq().PQhost(c) == nullptr || Libpq().PQhost(c)[0] == '\0') {
    // libpq refused the options before it knew a host to try: a service
    // that is not defined, a keyword it does not know.
    fault = ConfigurationError;
  } else if (!sqlstate.empty()) {
    fault = PgFaultOf(sqlstate);
  } else if (Libpq().PQconnectionNeedsPassword(c)) {
    fault = RefusedError;  // asked for a password, and none was given
  } else if (TlsRefused(why)) {
    fault = ConfigurationError;
  }
  return fault(describe, "", absl::StrCat("connect: ", why));
}

absl::StatusOr<PgResult> PgExec(PGconn* conn, const std::string& sql,
                                Deadline reply_by) {
  auto lost = [conn](absl::string_view what) {
    return TransientError(
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
    if (!WaitConnection(conn, /*for_write=*/true, reply_by)) {
      return TransientError("no progress sending a query to the server");
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
      return TransientError(absl::StrCat(
          "the server ended the session: ", severity != nullptr ? severity : "ERROR", ": ",
          PgErrorText(decisive.get()), "; then it closed the connection"));
    }
    return lost("connection lost");
  };
  for (;;) {
    while (Libpq().PQisBusy(conn) != 0) {
      if (!WaitConnection(conn, /*for_write=*/false, reply_by)) {
        return TransientError(
            "the server sent no reply in time (network or server down?)");
      }
      if (Libpq().PQconsumeInput(conn) == 0) return gone();
    }
    PgResult r(Libpq().PQgetResult(conn));
    if (r == nullptr) break;
    if (decisive == nullptr || !PgFailed(decisive.get())) decisive = std::move(r);
  }
  if (Libpq().PQstatus(conn) != CONNECTION_OK) return gone();
  if (decisive == nullptr) return UnexpectedError("the server sent no result");
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
