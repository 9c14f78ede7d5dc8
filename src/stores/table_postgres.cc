// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table store on PostgreSQL: libpq connections (stores/postgres_conn.h)
// in a pool, Symfony's pgsql SQL, and the `postgresql://`, `postgres://`,
// `pgsql://` and PDO `pgsql:` DSNs.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "platform/errors.h"
#include "platform/libpq_calls.h"
#include "platform/socket_wait.h"
#include "stores/connection_pool.h"
#include "stores/postgres_conn.h"
#include "stores/table_store.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "postgresql";
constexpr absl::Duration kReplyTimeout = absl::Seconds(10);

using Conninfo = std::vector<std::pair<std::string, std::string>>;

// A pooled connection. An idle session that the server ended (an
// administrator's pg_terminate_backend, a restart, idle_session_timeout)
// has sent its goodbye and closed the socket: pending input tells it, and
// it is dropped before a statement is sent on it, so that no statement
// (a DELETE in particular) is ever sent twice.
struct PgTableConn {
  PgConnection conn;
  bool ours() const { return conn.ours(); }
  bool looks_alive() const {
    return conn.looks_alive() && Libpq().PQtransactionStatus(conn.get()) == PQTRANS_IDLE &&
           !HasPendingInput(Libpq().PQsocket(conn.get()));
  }
};

absl::StatusCode CodeOfState(absl::string_view sqlstate) {
  if (absl::StartsWith(sqlstate, "08") || absl::StartsWith(sqlstate, "57")) {
    return absl::StatusCode::kUnavailable;
  }
  if (absl::StartsWith(sqlstate, "28") || sqlstate == "42501") {
    return absl::StatusCode::kPermissionDenied;
  }
  if (absl::StartsWith(sqlstate, "53")) return absl::StatusCode::kResourceExhausted;
  if (absl::StartsWith(sqlstate, "40")) return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kInternal;
}

class PgTableBackend final : public TableBackend {
 public:
  PgTableBackend(Conninfo conninfo, size_t max_idle, std::string describe)
      : conninfo_(std::move(conninfo)), describe_(std::move(describe)), pool_(max_idle) {}

  TableDialect dialect() const override { return TableDialect::kPgsql; }

  absl::Status Check() {
    absl::StatusOr<PgConnection> conn = PgConnect(conninfo_, describe_);
    if (!conn.ok()) return conn.status();
    pool_.Put(PgTableConn{*std::move(conn)});
    return absl::OkStatus();
  }

  absl::StatusOr<TableReply> Run(const std::string& sql) override {
    PgTableConn c;
    if (std::optional<PgTableConn> pooled = pool_.Take()) {
      c = *std::move(pooled);
    } else {
      absl::StatusOr<PgConnection> fresh = PgConnect(conninfo_, describe_);
      if (!fresh.ok()) return fresh.status();
      c.conn = *std::move(fresh);
    }
    absl::StatusOr<PgResult> r = PgExec(c.conn.get(), sql, Deadline::In(kReplyTimeout));
    if (!r.ok()) return absl::UnavailableError(r.status().message());
    TableReply out;
    const PGresult* res = r->get();
    if (PgFailed(res)) {
      const std::string state = PgSqlState(res);
      out.error = PgErrorText(res);
      if (state == "42P01") {
        out.failure = TableReply::Failure::kNoTable;
      } else if (state == "23505") {
        out.failure = TableReply::Failure::kDuplicateKey;
      } else if (state == "40001" || state == "40P01") {
        out.failure = TableReply::Failure::kRetry;
      } else {
        out.failure = TableReply::Failure::kOther;
        out.code = CodeOfState(state);
      }
    } else {
      uint64_t affected = 0;
      if (absl::SimpleAtoi(Libpq().PQcmdTuples(const_cast<PGresult*>(res)), &affected)) {
        out.affected = affected;
      }
      for (int i = 0; i < Libpq().PQntuples(res); ++i) {
        std::vector<std::string> row;
        for (int j = 0; j < Libpq().PQnfields(res); ++j)
          row.emplace_back(Libpq().PQgetvalue(res, i, j));
        out.rows.push_back(std::move(row));
      }
    }
    pool_.Put(std::move(c));
    return out;
  }

 private:
  const Conninfo conninfo_;
  const std::string describe_;
  ConnectionPool<PgTableConn> pool_;
};

const std::string* Find(const Conninfo& kv, absl::string_view key) {
  const std::string* found = nullptr;
  for (const auto& [k, v] : kv) {
    if (k == key) found = &v;  // the last one wins, as in libpq
  }
  return found;
}

std::string DescribePg(const Conninfo& conninfo) {
  auto part = [&](absl::string_view key) {
    const std::string* v = Find(conninfo, key);
    return v != nullptr ? *v : std::string();
  };
  std::string out = absl::StrCat(kName, "://");
  if (!part("user").empty()) absl::StrAppend(&out, part("user"), "@");
  const std::string host = part("host");
  const bool v6 = host.find(':') != std::string::npos;
  absl::StrAppend(&out, v6 ? "[" : "", host, v6 ? "]" : "");
  if (!part("port").empty()) absl::StrAppend(&out, ":", part("port"));
  absl::StrAppend(&out, "/", part("dbname"));
  return out;
}

// The libpq connection keywords this libpq knows, but "password".
std::vector<std::string> LibpqKeywords() {
  std::vector<std::string> out;
  PQconninfoOption* defaults = Libpq().PQconndefaults();
  if (defaults == nullptr) return out;
  for (PQconninfoOption* o = defaults; o->keyword != nullptr; ++o) {
    if (absl::string_view(o->keyword) != "password") out.emplace_back(o->keyword);
  }
  Libpq().PQconninfoFree(defaults);
  return out;
}

bool Known(const std::vector<std::string>& keywords, absl::string_view k) {
  for (const std::string& known : keywords) {
    if (known == k) return true;
  }
  return false;
}

// Server, credentials and libpq options from a URL or PDO DSN.
absl::StatusOr<Conninfo> ConninfoFromDsn(Dsn& dsn) {
  const std::vector<std::string> keywords = LibpqKeywords();
  if (keywords.empty()) {
    return absl::ResourceExhaustedError("ipclock: postgresql: PQconndefaults failed");
  }
  // Defaults first: libpq lets a later keyword override an earlier one.
  Conninfo conninfo = {
      {"fallback_application_name", "ipclock"},
      {"keepalives", "1"},
      {"keepalives_idle", "10"},
      {"keepalives_interval", "5"},
      {"keepalives_count", "3"},
  };
  if (dsn.has_authority()) {
    if (dsn.PeekOption("password").has_value()) {
      return absl::InvalidArgumentError(
          "ipclock: bad DSN for the postgresql table store: a password must be "
          "given as user:password@host, not as a query option");
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
  } else {
    // PDO's pgsql DSN: libpq's keywords, separated by ';'.
    for (absl::string_view part : absl::StrSplit(dsn.path(), ';', absl::SkipEmpty())) {
      const size_t eq = part.find('=');
      const std::string key = absl::AsciiStrToLower(part.substr(0, eq));
      if (eq == absl::string_view::npos) {
        return BadDsn(dsn, absl::StrCat("expected key=value in the PDO DSN, not '",
                                        part, "'"));
      }
      if (key == "password") {
        return absl::InvalidArgumentError(
            "ipclock: bad DSN for the postgresql table store: a password must be "
            "given as the query option ?password=..., not inside the PDO part "
            "(messages redact only the former)");
      }
      if (!Known(keywords, key)) {
        return BadDsn(dsn, absl::StrCat("unknown libpq keyword '", key, "'"));
      }
      conninfo.emplace_back(key, std::string(part.substr(eq + 1)));
    }
    if (Find(conninfo, "host") == nullptr && Find(conninfo, "hostaddr") == nullptr) {
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
  for (const std::string& k : keywords) {
    if (std::optional<std::string> v = dsn.TakeOption(k)) conninfo.emplace_back(k, *v);
  }
  return conninfo;
}

absl::StatusOr<std::unique_ptr<PgTableBackend>> BackendFromDsn(
    Dsn& dsn, PostgresTableStoreOptions* options) {
  absl::StatusOr<Conninfo> conninfo = ConninfoFromDsn(dsn);
  if (!conninfo.ok()) return conninfo.status();
  absl::StatusOr<long> max_idle = dsn.TakeInt("max_idle", 4, 0, 1024);
  if (!max_idle.ok()) return max_idle.status();
  absl::StatusOr<TableStoreOptions> table = TakeTableOptions(dsn);
  if (!table.ok()) return table.status();
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  options->conninfo = *std::move(conninfo);
  options->max_idle = static_cast<size_t>(*max_idle);
  options->table = *std::move(table);
  return std::make_unique<PgTableBackend>(options->conninfo, options->max_idle,
                                          DescribePg(options->conninfo));
}

absl::StatusOr<std::shared_ptr<Store>> PostgresTableStoreFromDsn(Dsn& dsn,
                                                                 const StoreOptions&) {
  PostgresTableStoreOptions options;
  absl::StatusOr<std::unique_ptr<PgTableBackend>> backend = BackendFromDsn(dsn, &options);
  if (!backend.ok()) return backend.status();
  if (absl::Status s = (*backend)->Check(); !s.ok()) return s;
  return MakeTableStore(kName, DescribePg(options.conninfo), kPostgresTableEntry.scope,
                        options.table, *std::move(backend));
}

absl::StatusOr<HeldLocks> ListPostgresTableLocks(Dsn& dsn, const ListRequest& request) {
  PostgresTableStoreOptions options;
  absl::StatusOr<std::unique_ptr<PgTableBackend>> backend = BackendFromDsn(dsn, &options);
  if (!backend.ok()) return backend.status();
  return ListTableLocks(**backend, DescribePg(options.conninfo), options.table, request);
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewPostgresTableStore(
    const PostgresTableStoreOptions& given) {
  if (absl::Status s = LibpqLibrary().Load(kPostgresTableEntry.name); !s.ok()) return s;
  Conninfo conninfo = {
      {"fallback_application_name", "ipclock"},
      {"connect_timeout", "10"},
      {"keepalives", "1"},
      {"keepalives_idle", "10"},
      {"keepalives_interval", "5"},
      {"keepalives_count", "3"},
  };
  conninfo.insert(conninfo.end(), given.conninfo.begin(), given.conninfo.end());
  const std::string describe = DescribePg(conninfo);
  auto backend = std::make_unique<PgTableBackend>(conninfo, given.max_idle, describe);
  if (absl::Status s = backend->Check(); !s.ok()) return s;
  return MakeTableStore(kName, describe, kPostgresTableEntry.scope, given.table,
                        std::move(backend));
}

const StoreDriver kPostgresTableDriver = {&PostgresTableStoreFromDsn,
                                          &ListPostgresTableLocks, &LibpqLibrary};

}  // namespace ipclock
