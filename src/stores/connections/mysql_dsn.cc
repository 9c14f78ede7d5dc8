// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/connections/mysql_dsn.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/named_file.h"
#include "core/store_errors.h"
#include "stores/connections/pdo_body.h"

namespace ipclock {

namespace {

absl::Status SetPort(const Dsn& dsn, absl::string_view text, int* port) {
  if (!absl::SimpleAtoi(text, port) || *port < 1 || *port > 65535) {
    return BadDsn(dsn, "the port must be a number from 1 to 65535");
  }
  return absl::OkStatus();
}

// PDO's "key=value;key=value" body of a `mysql:` DSN.
absl::Status ReadPdoBody(Dsn& dsn, MysqlConnectionOptions* out) {
  absl::StatusOr<std::vector<PdoPair>> pairs = PdoPairsOf(dsn, {"password", "pwd"});
  if (!pairs.ok()) return pairs.status();
  bool seen_host = false;
  for (const auto& [key, value] : *pairs) {
    if (key == "host") {
      out->host = value;
      seen_host = true;
    } else if (key == "port") {
      if (absl::Status s = SetPort(dsn, value, &out->port); !s.ok()) return s;
    } else if (key == "dbname") {
      out->database = value;
    } else if (key == "unix_socket") {
      out->unix_socket = value;
    } else if (key == "charset") {
      // Names are utf8mb4 text, whatever the DSN says.
      if (!absl::EqualsIgnoreCase(value, "utf8mb4")) {
        return BadDsn(dsn, "charset: the store always talks utf8mb4 (lock names "
                           "are computed in it)");
      }
    } else if (key == "user") {
      out->user = value;
    } else {
      return BadDsn(dsn, absl::StrCat("unknown PDO key '", key,
                                      "' (expected host, port, dbname, "
                                      "unix_socket, charset)"));
    }
  }
  if (!seen_host && out->unix_socket.empty()) {
    return BadDsn(dsn, "the PDO DSN names no host and no unix_socket");
  }
  if (std::optional<std::string> user = dsn.TakeOption("user")) out->user = *user;
  if (std::optional<std::string> password = dsn.TakeOption("password")) {
    out->password = *password;
  }
  return absl::OkStatus();
}

absl::Status ReadUrl(Dsn& dsn, MysqlConnectionOptions* out) {
  if (dsn.PeekOption("password").has_value()) {
    return ConfigurationError(
        "ipclock: bad DSN for a mysql store: a password must be given as "
        "user:password@host, not as a query option");
  }
  out->host = dsn.host();
  if (dsn.port() != 0) out->port = dsn.port();
  out->user = dsn.user();
  if (dsn.has_password()) out->password = dsn.password();
  absl::string_view db = dsn.path();
  if (absl::ConsumePrefix(&db, "/") && !db.empty()) {
    if (db.find('/') != absl::string_view::npos) {
      return BadDsn(dsn, "the path is the database name, one component");
    }
    out->database = std::string(db);
  }
  if (std::optional<std::string> socket = dsn.TakeOption("unix_socket")) {
    out->unix_socket = *socket;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MysqlConnectionOptions> MysqlConnectionFromDsn(Dsn& dsn) {
  MysqlConnectionOptions out;
  out.host.clear();
  absl::Status read = dsn.has_authority() ? ReadUrl(dsn, &out) : ReadPdoBody(dsn, &out);
  if (!read.ok()) return read;
  if (!out.unix_socket.empty()) {
    if (out.unix_socket[0] != '/') {
      return BadDsn(dsn, "unix_socket must be an absolute path");
    }
    if (!out.host.empty() && out.host != "localhost") {
      return BadDsn(dsn, "with unix_socket the host must be empty or localhost "
                         "(the connector ignores the socket for any other host)");
    }
    out.host = "localhost";
  } else if (out.host.empty()) {
    return BadDsn(dsn, "no host (write 127.0.0.1 for this host over TCP, or give "
                       "?unix_socket=/path)");
  }
  absl::StatusOr<long> connect_timeout = dsn.TakeInt("connect_timeout", 10, 1, 3600);
  if (!connect_timeout.ok()) return connect_timeout.status();
  out.connect_timeout_seconds = static_cast<int>(*connect_timeout);
  if (std::optional<std::string> mode = dsn.TakeOption("ssl_mode")) {
    const std::string m = absl::AsciiStrToLower(*mode);
    if (m == "disabled") {
      out.tls = MysqlConnectionOptions::Tls::kDisabled;
    } else if (m == "required") {
      out.tls = MysqlConnectionOptions::Tls::kRequired;
    } else if (m == "verify_identity") {
      out.tls = MysqlConnectionOptions::Tls::kVerifyIdentity;
    } else {
      return BadDsn(dsn, absl::StrCat("ssl_mode=", *mode,
                                      ": expected disabled, required or verify_identity"));
    }
  }
  if (std::optional<std::string> ca = dsn.TakeOption("ssl_ca")) {
    if (out.tls != MysqlConnectionOptions::Tls::kVerifyIdentity) {
      return BadDsn(dsn, "ssl_ca needs ssl_mode=verify_identity");
    }
    out.tls_ca = *ca;
  }
  if (absl::Status s = CheckMysqlConnection(out, absl::StrCat("bad DSN \"", dsn.redacted(), "\""));
      !s.ok()) {
    return s;
  }
  return out;
}

absl::Status CheckMysqlConnection(const MysqlConnectionOptions& options,
                                  absl::string_view where) {
  if (options.unix_socket.empty() && options.host != "localhost" && !IsHostName(options.host)) {
    return ConfigurationError(absl::StrCat(
        "ipclock: ", where, ": host \"", absl::CHexEscape(options.host),
        "\": expected a host name or an IP address"));
  }
  if (!options.unix_socket.empty()) {
    // The connector cuts a longer path short, and "connects" to a FIFO or
    // a device as to a socket that refuses.
    if (absl::Status s = CheckNamedFile(where,
                                        absl::StrCat("option unix_socket=", options.unix_socket),
                                        options.unix_socket, FileKind::kUnixSocket,
                                        IfMissing::kFine);
        !s.ok()) {
      return s;
    }
  }
  if (options.tls == MysqlConnectionOptions::Tls::kVerifyIdentity) {
    if (options.tls_ca.empty()) {
      return ConfigurationError(absl::StrCat(
          "ipclock: ", where, ": option ssl_mode=verify_identity: expected ssl_ca=FILE too "
          "(the CA that signed the server's certificate)"));
    }
    if (absl::Status s =
            CheckNamedFile(where, absl::StrCat("option ssl_ca=", options.tls_ca), options.tls_ca,
                           FileKind::kRegularFile, IfMissing::kConfiguration);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

std::string DescribeMysql(absl::string_view scheme,
                          const MysqlConnectionOptions& options) {
  std::string out = absl::StrCat(scheme, "://");
  if (!options.user.empty()) absl::StrAppend(&out, options.user, "@");
  if (!options.unix_socket.empty()) {
    absl::StrAppend(&out, "localhost/", options.database, "?unix_socket=",
                    options.unix_socket);
    return out;
  }
  const bool v6 = options.host.find(':') != std::string::npos;
  absl::StrAppend(&out, v6 ? "[" : "", options.host, v6 ? "]" : "", ":", options.port,
                  "/", options.database);
  return out;
}

}  // namespace ipclock
