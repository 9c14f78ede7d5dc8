// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// PostgresTransactionLock: pg_advisory_xact_lock on the caller's connection.
// See include/ipclock/stores/postgres_store.h.

#include <algorithm>
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/stores/postgres_store.h"
#include "platform/libpq_calls.h"
#include "stores/connections/postgres_conn.h"

namespace ipclock {

namespace {

absl::string_view XactLockFunction(LockMode mode, bool wait) {
  if (mode == LockMode::kShared) {
    return wait ? "pg_advisory_xact_lock_shared" : "pg_try_advisory_xact_lock_shared";
  }
  return wait ? "pg_advisory_xact_lock" : "pg_try_advisory_xact_lock";
}

}  // namespace

std::string PostgresTransactionLock::Describe() const {
  const bool ask = conn_ != nullptr && LibpqLibrary().loaded();
  const char* host = ask ? Libpq().PQhost(conn_) : nullptr;
  const char* port = ask ? Libpq().PQport(conn_) : nullptr;
  return absl::StrCat("postgresql+advisory transaction lock (",
                      host != nullptr ? host : "?", ":",
                      port != nullptr ? port : "?", ")");
}

absl::Status PostgresTransactionLock::CheckInTransaction(
    absl::string_view resource) const {
  if (absl::Status s = LibpqLibrary().Load("postgresql+advisory transaction lock"); !s.ok()) {
    return s;
  }
  if (conn_ == nullptr || Libpq().PQstatus(conn_) != CONNECTION_OK) {
    return MisuseError(Describe(), resource,
                       "the connection is not open");
  }
  switch (Libpq().PQtransactionStatus(conn_)) {
    case PQTRANS_INTRANS:
      return absl::OkStatus();
    case PQTRANS_INERROR:
      return MisuseError(Describe(), resource,
                         "the transaction has already failed; roll it back");
    case PQTRANS_IDLE:
      return MisuseError(Describe(), resource,
                         "not inside a transaction block (BEGIN first): outside "
                         "one the lock would end with its own statement");
    default:
      return MisuseError(Describe(), resource,
                         "the connection is busy with another query");
  }
}

absl::StatusOr<bool> PostgresTransactionLock::TryAcquire(
    absl::string_view resource, LockMode mode) {
  if (absl::Status s = CheckInTransaction(resource); !s.ok()) return s;
  const int64_t id = PostgresLockId(resource, scheme_);
  absl::StatusOr<PgResult> r =
      PgExec(conn_, absl::StrCat("SELECT ", XactLockFunction(mode, false), "(", id, ")"),
             Deadline::Never());
  if (!r.ok()) {
    return TransientError(Describe(), resource,
                          r.status().message());
  }
  if (PgFailed(r->get())) {
    return UnexpectedError(Describe(), resource,
                           PgErrorText(r->get()));
  }
  return Libpq().PQntuples(r->get()) == 1 &&
         absl::string_view(Libpq().PQgetvalue(r->get(), 0, 0)) == "t";
}

// The wait runs in a savepoint: a lock_timeout error aborts only the
// savepoint, which is rolled back, and the caller's transaction goes on. On
// success the savepoint is released and the lock passes to the enclosing
// transaction (an advisory transaction lock lasts to the end of the
// top-level transaction). lock_timeout is set with set_config(..., true),
// which lasts to the end of the transaction, so it is put back to the value
// read first: the caller's later statements must not inherit our timeout.
absl::Status PostgresTransactionLock::Acquire(absl::string_view resource,
                                              absl::Duration timeout,
                                              LockMode mode) {
  if (timeout <= absl::ZeroDuration()) {
    absl::StatusOr<bool> got = TryAcquire(resource, mode);
    if (!got.ok()) return got.status();
    if (*got) return absl::OkStatus();
    return StayedBusyError(Describe(), resource,
                           "held by another session");
  }
  if (absl::Status s = CheckInTransaction(resource); !s.ok()) return s;
  const Deadline deadline = Deadline::In(timeout);
  const int64_t id = PostgresLockId(resource, scheme_);
  auto fail = [&](StoreErrorMaker fault, absl::string_view what) {
    return fault(Describe(), resource, what);
  };

  absl::StatusOr<PgResult> prev =
      PgExec(conn_, "SELECT current_setting('lock_timeout')", Deadline::Never());
  if (!prev.ok()) return fail(TransientError, prev.status().message());
  if (PgFailed(prev->get()) || Libpq().PQntuples(prev->get()) != 1) {
    return fail(UnexpectedError, PgErrorText(prev->get()));
  }
  std::unique_ptr<char, void (*)(void*)> prev_literal(
      Libpq().PQescapeLiteral(conn_, Libpq().PQgetvalue(prev->get(), 0, 0),
                              static_cast<size_t>(Libpq().PQgetlength(prev->get(), 0, 0))),
      Libpq().PQfreemem.get());
  if (prev_literal == nullptr) {
    return fail(UnexpectedError, PgConnError(conn_));
  }

  int64_t timeout_ms = 0;  // forever
  if (!deadline.is_never()) {
    timeout_ms = std::clamp<int64_t>(
        absl::ToInt64Milliseconds(absl::Ceil(deadline.Remaining(), absl::Milliseconds(1))),
        1, INT32_MAX);
  }
  absl::StatusOr<PgResult> r = PgExec(
      conn_,
      absl::StrCat("SAVEPOINT ipclock_xact_lock; "
                   "SELECT set_config('lock_timeout', '", timeout_ms, "', true); "
                   "SELECT ", XactLockFunction(mode, true), "(", id, "); "
                   "SELECT set_config('lock_timeout', ", prev_literal.get(), ", true); "
                   "RELEASE SAVEPOINT ipclock_xact_lock"),
      Deadline::Never());
  if (!r.ok()) return fail(TransientError, r.status().message());
  if (!PgFailed(r->get())) return absl::OkStatus();

  const std::string state = PgSqlState(r->get());
  const std::string text = PgErrorText(r->get());
  // Rolling back to the savepoint also undoes its set_config.
  absl::StatusOr<PgResult> undo = PgExec(
      conn_, "ROLLBACK TO SAVEPOINT ipclock_xact_lock; RELEASE SAVEPOINT ipclock_xact_lock",
      Deadline::Never());
  if (!undo.ok()) return fail(TransientError, undo.status().message());
  if (PgFailed(undo->get())) {
    return fail(UnexpectedError,
                absl::StrCat(text, "; then rolling back the savepoint failed: ",
                             PgErrorText(undo->get())));
  }
  if (state == kLockNotAvailable) {
    return fail(StayedBusyError,
                absl::StrCat("still held by another session after ",
                             absl::FormatDuration(timeout)));
  }
  if (state == kDeadlockDetected) return fail(LostError, text);
  return fail(UnexpectedError, text);
}

}  // namespace ipclock
