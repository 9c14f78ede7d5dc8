// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The advisory-lock store's DSN (`postgresql+advisory` and its other
// schemes): its options read and checked for the registry's driver. The
// libpq keywords it shares with the table store are read in postgres_dsn.cc.
// Compiled only with libpq (Meson feature `postgres`).

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/options_driver.h"
#include "platform/libpq_calls.h"
#include "stores/connections/postgres_dsn.h"
#include "stores/postgres/postgres_store.h"

namespace ipclock {

namespace {

absl::StatusOr<PostgresStoreOptions> PostgresOptionsFromDsn(Dsn& dsn) {
  PostgresStoreOptions options;
  absl::StatusOr<PgConninfo> conninfo = PgConninfoFromDsn(dsn, /*pdo_form=*/false);
  if (!conninfo.ok()) return conninfo.status();
  options.conninfo = *std::move(conninfo);
  absl::Status scheme = dsn.TakeChoiceInto("scheme",
                                            {{"native", PostgresLockIdScheme::kNative},
                                             {"symfony", PostgresLockIdScheme::kSymfony},
                                             {"laravel", PostgresLockIdScheme::kLaravel}},
                                            &options.scheme);
  if (!scheme.ok()) return scheme;
  if (std::optional<std::string> level = dsn.TakeOption("level")) {
    if (*level == "transaction") {
      // A transaction-level lock is released when its transaction ends and
      // is only worth having inside the transaction that does the work, on
      // the caller's connection. A store's sessions are its own.
      return BadDsn(dsn,
                    "option level=transaction: transaction-level advisory locks belong to "
                    "the caller's own transaction; use ipclock::PostgresTransactionLock "
                    "with your PGconn (include/ipclock/stores/postgres_store.h)");
    }
    if (*level != "session") {
      return BadDsn(dsn, absl::StrCat("option level=", *level, ": expected session"));
    }
  }
  absl::StatusOr<long> max_idle = dsn.TakeInt("max_idle", 4, 0, 1024);
  if (!max_idle.ok()) return max_idle.status();
  options.max_idle = static_cast<size_t>(*max_idle);
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return options;
}

absl::Status CheckPostgresDsn(const PostgresStoreOptions& options, const Dsn& dsn) {
  return CheckPgConninfo(WithPgDefaults(options.conninfo),
                         absl::StrCat("bad DSN \"", dsn.redacted(), "\""));
}

}  // namespace

const StoreDriver kPostgresDriver = {
    &PrepareFromOptions<&PostgresOptionsFromDsn, &CheckPostgresDsn, &PostgresCapabilities,
                        &NewPostgresStore>,
    nullptr, &LibpqLibrary};

}  // namespace ipclock
