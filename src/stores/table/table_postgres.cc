// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table store on PostgreSQL: libpq connections (stores/connections/postgres_conn.h)
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
#include "core/options_driver.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "platform/libpq_calls.h"
#include "platform/socket_wait.h"
#include "stores/connections/connection_pool.h"
#include "stores/connections/postgres_conn.h"
#include "stores/connections/postgres_dsn.h"
#include "stores/table/table_store.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "postgresql";
constexpr absl::Duration kReplyTimeout = absl::Seconds(10);

using Conninfo = PgConninfo;

// A pooled connection. An idle session that the server ended (an
// administrator's pg_terminate_backend, a restart, idle_session_timeout)
// has sent its goodbye and closed the socket: pending input tells it, and
// it is dropped before a statement is sent on it, so that no statement
// (a DELETE in particular) is ever sent twice.
struct PgTableConn {
  PgTableConn() = default;
  explicit PgTableConn(PgConnection opened) : conn(std::move(opened)) {}

  PgConnection conn;
  bool ours() const { return conn.ours(); }
  bool looks_alive() const {
    return conn.looks_alive() && Libpq().PQtransactionStatus(conn.get()) == PQTRANS_IDLE &&
           !HasPendingInput(Libpq().PQsocket(conn.get()));
  }
};

class PgTableBackend final : public TableBackend {
 public:
  PgTableBackend(Conninfo conninfo, size_t max_idle, std::string describe)
      : conninfo_(std::move(conninfo)), describe_(std::move(describe)), pool_(max_idle) {}

  TableDialect dialect() const override { return TableDialect::kPgsql; }

  absl::Status Check() override {
    absl::StatusOr<PgConnection> conn = PgConnect(conninfo_, describe_);
    if (!conn.ok()) return conn.status();
    pool_.Put(PgTableConn(*std::move(conn)));
    return absl::OkStatus();
  }

  absl::StatusOr<TableReply> Run(const std::string& sql) override {
    absl::StatusOr<PgTableConn> taken =
        pool_.TakeOrConnect([this] { return PgConnect(conninfo_, describe_); });
    if (!taken.ok()) return taken.status();
    PgTableConn c = *std::move(taken);
    absl::StatusOr<PgResult> r = PgExec(c.conn.get(), sql, Deadline::In(kReplyTimeout));
    if (!r.ok()) return TransientError(r.status().message());
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
        out.fault = PgFaultOf(state);
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

std::string DescribePg(const Conninfo& conninfo) { return DescribePgConninfo(kName, conninfo); }
std::string Describe(const PostgresTableStoreOptions& options) {
  return DescribePg(options.conninfo);
}

absl::StatusOr<PostgresTableStoreOptions> OptionsFromDsn(Dsn& dsn) {
  PostgresTableStoreOptions options;
  absl::StatusOr<Conninfo> conninfo = PgConninfoFromDsn(dsn, /*pdo_form=*/true);
  if (!conninfo.ok()) return conninfo.status();
  if (absl::Status s = TakeTableDsnTail(dsn, &options.max_idle, &options.table); !s.ok()) {
    return s;
  }
  // As given: NewPostgresTableStore() adds the defaults.
  options.conninfo = *std::move(conninfo);
  return options;
}

absl::StatusOr<std::unique_ptr<PgTableBackend>> BackendFromDsn(
    Dsn& dsn, PostgresTableStoreOptions* options) {
  absl::StatusOr<PostgresTableStoreOptions> read = OptionsFromDsn(dsn);
  if (!read.ok()) return read.status();
  *options = *std::move(read);
  return std::make_unique<PgTableBackend>(WithPgDefaults(options->conninfo), options->max_idle,
                                          Describe(*options));
}

absl::Status CheckOptions(const PostgresTableStoreOptions& options, const Dsn& dsn) {
  return CheckPgConninfo(WithPgDefaults(options.conninfo),
                         absl::StrCat("bad DSN \"", dsn.redacted(), "\""));
}

Capabilities PostgresTableCapabilities() { return TableCapabilities(kPostgresTableEntry.scope); }

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewPostgresTableStore(
    const PostgresTableStoreOptions& given) {
  if (absl::Status s = LibpqLibrary().Load(kPostgresTableEntry.name); !s.ok()) return s;
  const Conninfo conninfo = WithPgDefaults(given.conninfo);
  const std::string describe = DescribePg(conninfo);
  if (absl::Status s = CheckPgConninfo(conninfo, describe); !s.ok()) return s;
  auto backend = std::make_unique<PgTableBackend>(conninfo, given.max_idle, describe);
  return MakeTableStore(kName, describe, kPostgresTableEntry.scope, given.table,
                        std::move(backend));
}

const StoreDriver kPostgresTableDriver = {
    &PrepareFromOptions<&OptionsFromDsn, &CheckOptions, &PostgresTableCapabilities,
                        &NewPostgresTableStore>,
    &ListTableLocksFromDsn<PostgresTableStoreOptions, &BackendFromDsn, &Describe>,
    &LibpqLibrary};

}  // namespace ipclock
