// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/connections/postgres_dsn.h"

#include <arpa/inet.h>

#include <climits>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/named_file.h"
#include "core/store_errors.h"
#include "ipclock/errors.h"
#include "platform/libpq_calls.h"
#include "stores/connections/pdo_body.h"

namespace ipclock {

namespace {

// The libpq connection keywords this libpq knows.
std::vector<std::string> LibpqKeywords() {
  std::vector<std::string> out;
  PQconninfoOption* defaults = Libpq().PQconndefaults();
  if (defaults == nullptr) return out;
  for (PQconninfoOption* o = defaults; o->keyword != nullptr; ++o) out.emplace_back(o->keyword);
  Libpq().PQconninfoFree(defaults);
  return out;
}

bool Contains(const std::vector<std::string>& list, absl::string_view v) {
  for (const std::string& s : list) {
    if (s == v) return true;
  }
  return false;
}

// The keywords whose values libpq takes from a closed set.
struct Choice {
  absl::string_view keyword;
  std::vector<absl::string_view> values;
};
const std::vector<Choice>& Choices() {
  static const std::vector<Choice>* choices = new std::vector<Choice>{
      {"sslmode", {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}},
      {"gssencmode", {"disable", "prefer", "require"}},
      {"channel_binding", {"disable", "prefer", "require"}},
      {"target_session_attrs",
       {"any", "read-write", "read-only", "primary", "standby", "prefer-standby"}},
      {"load_balance_hosts", {"disable", "random"}},
      {"sslnegotiation", {"postgres", "direct"}},
      {"ssl_min_protocol_version", {"", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}},
      {"ssl_max_protocol_version", {"", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}},
      {"requiressl", {"0", "1"}},
      {"sslcompression", {"0", "1"}},
      {"sslsni", {"0", "1"}},
      {"keepalives", {"0", "1"}},
  };
  return *choices;
}

// Keywords whose value is a count of seconds or probes.
constexpr absl::string_view kNumbers[] = {"connect_timeout", "keepalives_idle",
                                          "keepalives_interval", "keepalives_count",
                                          "tcp_user_timeout"};

// Keywords that name a file libpq opens, and a dir.
constexpr absl::string_view kFiles[] = {"sslcert", "sslkey", "sslrootcert", "sslcrl",
                                        "passfile"};
constexpr absl::string_view kDirs[] = {"sslcrldir"};

// The socket of a server whose host is a dir: "<dir>/.s.PGSQL.<port>".
constexpr size_t kSocketNameBytes = sizeof("/.s.PGSQL.65535") - 1;

bool IsPort(absl::string_view s) {
  int p;
  return s.find_first_not_of("0123456789") == absl::string_view::npos &&
         absl::SimpleAtoi(s, &p) && p >= 1 && p <= 65535;
}

bool IsNumericAddress(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace

StoreErrorMaker PgFaultOf(absl::string_view sqlstate) {
  if (sqlstate == "53300") return TransientError;  // too many connections
  if (absl::StartsWith(sqlstate, "08") || absl::StartsWith(sqlstate, "57") ||
      absl::StartsWith(sqlstate, "40")) {
    // Connection trouble; operator action (a shutdown, a restart, a server
    // that is starting); a transaction rolled back by a deadlock or a
    // serialization failure.
    return TransientError;
  }
  if (absl::StartsWith(sqlstate, "28") || sqlstate == "42501") {
    return RefusedError;
  }
  if (absl::StartsWith(sqlstate, "53")) return OutOfResourcesError;
  // No such database or schema; a name or parameter the server does not
  // know or takes no such value for; a feature it does not have.
  if (absl::StartsWith(sqlstate, "3D") || absl::StartsWith(sqlstate, "3F") ||
      absl::StartsWith(sqlstate, "42") || absl::StartsWith(sqlstate, "22") ||
      absl::StartsWith(sqlstate, "0A")) {
    return ConfigurationError;
  }
  return UnexpectedError;
}

const std::string* FindPgKeyword(const PgConninfo& conninfo, absl::string_view key) {
  const std::string* found = nullptr;
  for (const auto& [k, v] : conninfo) {
    if (k == key) found = &v;  // the last one wins, as in libpq
  }
  return found;
}

std::string DescribePgConninfo(absl::string_view scheme, const PgConninfo& conninfo) {
  auto part = [&](absl::string_view key) {
    const std::string* v = FindPgKeyword(conninfo, key);
    return v != nullptr ? *v : std::string();
  };
  std::string out = absl::StrCat(scheme, "://");
  if (!part("user").empty()) absl::StrAppend(&out, part("user"), "@");
  const std::string host = part("host");
  const bool v6 = host.find(':') != std::string::npos;
  absl::StrAppend(&out, v6 ? "[" : "", host, v6 ? "]" : "");
  if (!part("port").empty()) absl::StrAppend(&out, ":", part("port"));
  absl::StrAppend(&out, "/", part("dbname"));
  return out;
}

PgConninfo WithPgDefaults(const PgConninfo& conninfo) {
  PgConninfo out = {
      {"fallback_application_name", "ipclock"},
      {"connect_timeout", "10"},
      {"keepalives", "1"},
      {"keepalives_idle", "10"},
      {"keepalives_interval", "5"},
      {"keepalives_count", "3"},
  };
  out.insert(out.end(), conninfo.begin(), conninfo.end());
  return out;
}

absl::StatusOr<PgConninfo> PgConninfoFromDsn(Dsn& dsn, bool pdo_form) {
  const std::vector<std::string> keywords = LibpqKeywords();
  if (keywords.empty()) {
    return OutOfResourcesError("ipclock: postgres: PQconndefaults failed");
  }
  PgConninfo conninfo;
  if (dsn.has_authority()) {
    // Before anything that could quote the DSN back: a password given as a
    // query option is not redacted from messages.
    if (dsn.PeekOption("password").has_value()) {
      return ConfigurationError(absl::StrCat(
          "ipclock: bad DSN for the ", dsn.scheme(), " store: a password must be given as "
          "user:password@host, not as a query option (messages redact only the former)"));
    }
    if (!dsn.host().empty()) conninfo.emplace_back("host", dsn.host());
    if (dsn.port() != 0) conninfo.emplace_back("port", absl::StrCat(dsn.port()));
    if (!dsn.user().empty()) conninfo.emplace_back("user", dsn.user());
    if (dsn.has_password()) conninfo.emplace_back("password", dsn.password());
    absl::string_view db = dsn.path();
    if (absl::ConsumePrefix(&db, "/") && !db.empty()) {
      if (db.find('/') != absl::string_view::npos) {
        return BadDsn(dsn, "the path is the database name, one component");
      }
      conninfo.emplace_back("dbname", std::string(db));
    }
  } else if (!pdo_form) {
    return BadDsn(dsn, absl::StrCat("expected ", dsn.scheme(),
                                    "://user:password@host:port/dbname"));
  } else {
    // PDO's pgsql DSN: libpq's keywords, separated by ';'.
    absl::StatusOr<std::vector<PdoPair>> pairs = PdoPairsOf(dsn, {"password"});
    if (!pairs.ok()) return pairs.status();
    for (PdoPair& pair : *pairs) {
      if (!Contains(keywords, pair.key)) {
        return BadDsn(dsn, absl::StrCat("unknown libpq keyword '", pair.key, "' in the PDO DSN"));
      }
      conninfo.emplace_back(std::move(pair.key), std::move(pair.value));
    }
    if (FindPgKeyword(conninfo, "host") == nullptr &&
        FindPgKeyword(conninfo, "hostaddr") == nullptr) {
      return BadDsn(dsn, "the PDO DSN names no host");
    }
    if (std::optional<std::string> user = dsn.TakeOption("user")) {
      conninfo.emplace_back("user", *user);
    }
    if (std::optional<std::string> password = dsn.TakeOption("password")) {
      conninfo.emplace_back("password", *password);
    }
  }
  absl::StatusOr<long> connect_timeout = dsn.TakeInt("connect_timeout", 10, 0, 3600);
  if (!connect_timeout.ok()) return connect_timeout.status();
  conninfo.emplace_back("connect_timeout", absl::StrCat(*connect_timeout));
  // Every other libpq keyword passes through (sslmode, application_name,
  // options, target_session_attrs, ...), checked by CheckPgConninfo().
  for (const std::string& k : keywords) {
    if (k == "password") continue;
    if (std::optional<std::string> v = dsn.TakeOption(k)) conninfo.emplace_back(k, *v);
  }
  return conninfo;
}

absl::Status CheckPgConninfo(const PgConninfo& conninfo, absl::string_view where) {
  const std::vector<std::string> keywords = LibpqKeywords();
  if (keywords.empty()) {
    return OutOfResourcesError("ipclock: postgres: PQconndefaults failed");
  }
  auto bad = [&](absl::string_view key, absl::string_view value, absl::string_view expected) {
    return ConfigurationError(absl::StrCat("ipclock: ", where, ": option ", key, "=",
                                           value, ": expected ", expected));
  };
  for (const auto& [key, value] : conninfo) {
    if (!Contains(keywords, key)) return bad(key, value, "a libpq connection keyword");
    for (const Choice& c : Choices()) {
      if (key != c.keyword) continue;
      bool ok = false;
      for (absl::string_view v : c.values) ok = ok || v == value;
      if (!ok) return bad(key, value, absl::StrJoin(c.values, ", "));
    }
    for (absl::string_view n : kNumbers) {
      int v;
      if (key == n && !value.empty() &&
          (value.find_first_not_of("0123456789") != std::string::npos ||
           !absl::SimpleAtoi(value, &v))) {
        return bad(key, value, absl::StrCat("a whole number from 0 to ", INT_MAX));
      }
    }
    for (absl::string_view f : kFiles) {
      if (key != f || value.empty() || (key == "sslrootcert" && value == "system")) continue;
      if (absl::Status s = CheckNamedFile(where, absl::StrCat("option ", key, "=", value), value,
                                          FileKind::kRegularFile, IfMissing::kFine);
          !s.ok()) {
        return s;
      }
    }
    for (absl::string_view d : kDirs) {
      if (key != d || value.empty()) continue;
      if (absl::Status s = CheckNamedFile(where, absl::StrCat("option ", key, "=", value), value,
                                          FileKind::kDirectory, IfMissing::kFine);
          !s.ok()) {
        return s;
      }
    }
  }
  // Host, address and port lists, as libpq matches them up.
  std::vector<std::string> hosts;
  std::vector<std::string> addrs;
  std::vector<std::string> ports;
  if (const std::string* v = FindPgKeyword(conninfo, "host")) hosts = absl::StrSplit(*v, ',');
  if (const std::string* v = FindPgKeyword(conninfo, "hostaddr")) addrs = absl::StrSplit(*v, ',');
  if (const std::string* v = FindPgKeyword(conninfo, "port")) ports = absl::StrSplit(*v, ',');
  for (const std::string& p : ports) {
    if (!p.empty() && !IsPort(p)) {
      return bad("port", *FindPgKeyword(conninfo, "port"),
                 "port numbers from 1 to 65535, separated by ','");
    }
  }
  for (const std::string& a : addrs) {
    if (!a.empty() && !IsNumericAddress(a)) {
      return bad("hostaddr", *FindPgKeyword(conninfo, "hostaddr"),
                 "numeric IPv4 or IPv6 addresses, separated by ','");
    }
  }
  if (!hosts.empty() && !addrs.empty() && hosts.size() != addrs.size()) {
    return bad("hostaddr", *FindPgKeyword(conninfo, "hostaddr"),
               absl::StrCat("as many addresses as hosts (", hosts.size(), ")"));
  }
  const size_t servers = std::max<size_t>({hosts.size(), addrs.size(), 1});
  if (ports.size() > 1 && ports.size() != servers) {
    return bad("port", *FindPgKeyword(conninfo, "port"),
               absl::StrCat("one port, or one per host (", servers, ")"));
  }
  for (const std::string& h : hosts) {
    if (!h.empty() && h[0] != '/' && !IsHostName(h)) {
      return bad("host", *FindPgKeyword(conninfo, "host"),
                 "host names, IP addresses or socket dirs, separated by ','");
    }
    if (h.empty() || h[0] != '/') continue;
    // A dir holding the server's socket: there once the server runs.
    const std::string label = absl::StrCat("the socket dir ", h);
    if (h.size() + kSocketNameBytes > kMaxUnixSocketPath) {
      return ConfigurationError(absl::StrCat(
          "ipclock: ", where, ": ", label, ": too long for a Unix socket address (its socket, ",
          h, "/.s.PGSQL.PORT, may be at most ", kMaxUnixSocketPath, " bytes)"));
    }
    if (absl::Status s =
            CheckNamedFile(where, label, h, FileKind::kDirectory, IfMissing::kFine);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace ipclock
