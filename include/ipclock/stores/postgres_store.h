// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/postgres_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
//
// Locks held as PostgreSQL advisory locks, for processes on many hosts that
// share one database server. Built with the `postgres` Meson feature (libpq);
// without it the DSNs below are Unimplemented and `NewPostgresStore()` does
// not exist. `PostgresLockId()` is in every build.
//
// DSNs (see doc/stores.md, "PostgreSQL"):
//
//   postgresql+advisory://user:password@host:5432/db    Symfony's name
//   pgsql+advisory://...   postgres+advisory://...      the same
//
// (`postgresql://`, `postgres://` and `pgsql://` are Symfony's table store
// on PostgreSQL, as in Symfony's factory: include/ipclock/stores/table_store.h.)
//
// Query options: `scheme=native|symfony|laravel` (how a resource becomes a
// lock id, below), `connect_timeout=SECONDS` (10 by default), `max_idle=N`
// idle connections kept for reuse (4), `level=session` (the only level a
// store has; see `PostgresTransactionLock` for transaction-level locks), and
// any libpq connection keyword (`sslmode`, `application_name`, ...) except
// `password`, which belongs in the user-info part where messages redact it.
//
// One connection per held lock. Advisory session locks belong to a server
// session, and two lock requests in one session never conflict (the server
// counts them instead). So that two `Lock`s on one resource exclude each
// other even in one process, every held Key has a connection of its own: it
// is taken from a small per-store pool (or opened) when the Key acquires and
// goes back to the pool when it releases. The cost is one server connection
// (one backend process on the server) per lock held at once; a program that
// holds hundreds of locks at once needs `max_connections` to match.
// Acquire-and-release costs two round trips on an open connection.
//
// Capabilities: blocking (the server queues waiters and wakes the next one on
// release; a timed wait is one `pg_advisory_lock` under `SET LOCAL
// lock_timeout`, with no polling), shared, remote scope. Not expiring (an
// advisory lock lasts as long as its session), not serializable (another
// process cannot speak on our session), no fencing tokens, and no owner-death
// reports: when a holder dies the kernel closes its socket and the server
// ends the session and releases its locks, but nothing tells the next holder.
//
// A lost session is a lost lock: the server releases a session's advisory
// locks when it ends it (pg_terminate_backend, a restart or shutdown, a
// crash, idle_session_timeout). `Lock::CheckAcquired()` asks the session in
// one query whether its backend still holds the lock (pg_locks), and says
// Aborted, "the session ended: ..." with the server's reason, when it does
// not; a release after the loss returns the same Aborted, never OK. The
// watch on held locks (lock_watch.h) polls each held lock's socket, which
// the server closes when it ends the session, so such a loss is reported at
// once rather than at the next interval. Keepalives are on (10 s idle, 3
// probes 5 s apart unless the DSN says otherwise), so that a dead network is
// noticed within about 25 s rather than the kernel's two hours; a session
// whose server does not answer a check within 10 s is closed and reported
// lost. Notices from the server never go to stderr.
//
// Caveats:
//   * Do not connect through a transaction-pooling proxy (PgBouncer in
//     transaction mode): it hands the session to other clients between
//     statements, and with it the lock.
//   * A server with `idle_session_timeout` would end a session that holds a
//     lock and does nothing; the store turns it off for its own sessions.
//   * After fork(), a child must not use its parent's held Keys: the
//     connection and the lock belong to the parent. The store refuses
//     (FailedPrecondition), and pooled connections are never shared with a
//     child: it opens its own.

#ifndef IPCLOCK_POSTGRES_STORE_H_
#define IPCLOCK_POSTGRES_STORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/store.h"

// libpq's connection type, declared as libpq-fe.h declares it so that this
// header does not need libpq's.
typedef struct pg_conn PGconn;

namespace ipclock {

// How a resource name becomes the bigint id of an advisory lock. Ids of
// different schemes never meet on purpose: pick the scheme of the programs
// that must exclude each other.
enum class PostgresLockIdScheme {
  // The first 8 bytes of SHA-256(resource), a signed big-endian int64: the
  // whole 64-bit id space, so collisions are negligible.
  kNative,
  // Symfony's PostgreSqlStore: CRC-32 (zlib, IEEE) of the resource as an
  // unsigned number, e.g. "invoice-42" -> 4091648539. Only 2^32 ids: among
  // 10,000 resource names the odds that two share an id are already about 1
  // in 86 (the birthday bound), and two resources that share an id exclude
  // each other.
  kSymfony,
  // Laravel (mpyw/laravel-database-advisory-lock): PostgreSQL's
  // hashtext(resource), a signed int32 sign-extended to bigint, computed here
  // as a little-endian server computes it. Same 2^32 caveat as kSymfony.
  kLaravel,
};

// The advisory lock id of `resource` under `scheme`.
int64_t PostgresLockId(absl::string_view resource, PostgresLockIdScheme scheme);

struct PostgresStoreOptions {
  // libpq connection keywords and values (host, port, dbname, user,
  // password, sslmode, ...), passed to PQconnectdbParams in this order.
  std::vector<std::pair<std::string, std::string>> conninfo;
  PostgresLockIdScheme scheme = PostgresLockIdScheme::kNative;
  // Idle connections kept for the next acquisition. Connections beyond it
  // are closed on release.
  size_t max_idle = 4;
};

// Connects once (to check the server and the credentials; the connection
// then waits in the pool) and returns the store. Unavailable naming
// host:port when the server cannot be reached, PermissionDenied when it
// refused the credentials. No message contains the password.
absl::StatusOr<std::shared_ptr<Store>> NewPostgresStore(
    const PostgresStoreOptions& options);

// A transaction-level advisory lock (`pg_advisory_xact_lock`) taken on the
// caller's own connection, inside the caller's own transaction: the lock
// protects the work of that transaction and the server releases it when the
// top-level transaction commits or rolls back (not when a savepoint is
// released). There is no release call. This is what a store cannot offer:
// a store's sessions are its own, while a transaction lock is only useful in
// the transaction that does the work.
//
//   PGconn* conn = ...;                          // the caller's connection
//   PQexec(conn, "BEGIN");
//   ipclock::PostgresTransactionLock xlock(conn);
//   absl::Status s = xlock.Acquire("invoice-42", absl::Seconds(5));
//   if (!s.ok()) ...                             // DeadlineExceeded if busy
//   ... the transaction's work ...
//   PQexec(conn, "COMMIT");                      // releases the lock
//
// FailedPrecondition when `conn` is not inside a healthy transaction block
// (outside one the lock would end with its own statement). A timed wait runs
// in a savepoint, so that running out of time leaves the caller's
// transaction usable; its lock_timeout is put back as it was. The object
// does not own `conn` and is not thread-safe; `conn` must outlive it.
class PostgresTransactionLock {
 public:
  explicit PostgresTransactionLock(
      PGconn* conn,
      PostgresLockIdScheme scheme = PostgresLockIdScheme::kNative)
      : conn_(conn), scheme_(scheme) {}

  // Tries once: true if the transaction now holds the lock, false if another
  // session holds it.
  absl::StatusOr<bool> TryAcquire(absl::string_view resource,
                                  LockMode mode = LockMode::kExclusive);

  // Waits up to `timeout` (forever by default). DeadlineExceeded if another
  // session still held the lock when it ran out.
  absl::Status Acquire(absl::string_view resource,
                       absl::Duration timeout = absl::InfiniteDuration(),
                       LockMode mode = LockMode::kExclusive);

 private:
  absl::Status CheckInTransaction(absl::string_view resource) const;
  std::string Describe() const;

  PGconn* conn_;
  PostgresLockIdScheme scheme_;
};

}  // namespace ipclock

#endif  // IPCLOCK_POSTGRES_STORE_H_
