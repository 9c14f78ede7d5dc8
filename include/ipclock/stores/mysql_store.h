// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/mysql_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
//
// Locks held as MySQL/MariaDB named locks (GET_LOCK), for processes on many
// hosts that share one database server, and for PHP applications that lock
// on the same server with Laravel's database advisory locks
// (mpyw/laravel-database-advisory-lock) or Symfony 8.2's MysqlStore. Built with the `mysql` Meson feature (MariaDB
// Connector/C); without it the DSNs below are Unimplemented and
// `NewMysqlAdvisoryStore()` does not exist. `MysqlLockName()` is in every
// build.
//
// DSNs (see doc/stores.md, "MySQL and MariaDB"):
//
//   mysql+advisory://user:password@host:3306/db
//   mysql+advisory://user:password@localhost/db?unix_socket=/run/mysqld/mysqld.sock
//
// The Unix socket is the `unix_socket` query option, as Doctrine and PDO
// name it; the host is then empty or "localhost". As in every MySQL client,
// the host "localhost" without `unix_socket` means the connector's default
// socket, not TCP: write 127.0.0.1 for TCP on this host.
// Query options: `connect_timeout=SECONDS` (10), `max_idle=N` idle
// connections kept for reuse (4), `wait_timeout=SECONDS` (the session's
// wait_timeout, 31536000 by default; see "Limits"), `wait_slice=SECONDS`
// (30; see "Waiting"), `ssl_mode=disabled|required|verify_identity` (TLS
// off, on without checking the certificate, on with the certificate and
// host checked; a server that does not agree to TLS is refused, not used in
// plain text) and `ssl_ca=FILE` (the CA for verify_identity),
// `scheme=laravel|symfony` (how a resource is named, below; laravel by
// default). A password belongs in the user-info part, where messages redact
// it.
//
// Names. Only programs that name a resource the same way exclude each
// other; the two schemes never meet.
//
// `scheme=symfony` names it as Symfony 8.2's MysqlStore does (the store
// Symfony's factory makes for `mysql+advisory:`): the lowercase hex SHA-256
// of the resource, 64 characters, so neither MySQL's 64-character limit
// nor MariaDB's 192 bytes nor a collation ever matters. A try is Symfony's
// `SELECT IF(IS_USED_LOCK(n) = CONNECTION_ID(), -1, GET_LOCK(n, 0))`, the
// release `RELEASE_LOCK(n)`, the check `IS_USED_LOCK(n) = CONNECTION_ID()`.
// Waits are the server-side slices below: Symfony's own blocking
// `GET_LOCK(n, -1)` is refused by MariaDB (it returns NULL).
//
// `scheme=laravel`, the default, because it was this store's only scheme
// before Symfony had one: a default that changed would let an upgraded
// process and an older one lock the same resource under two names, both at
// once. A resource becomes a lock name as Laravel names it, computed here
// exactly as the server computes Laravel's SQL expression
//
//   CASE WHEN CHAR_LENGTH(key) > 64
//        THEN CONCAT(SUBSTR(key, 1, 24), SHA1(key)) ELSE key END
//
// on a utf8mb4 connection: a name of at most 64 characters (not bytes) is
// the name itself; a longer one is its first 24 characters and the SHA-1 of
// all its bytes in lowercase hex (64 characters). So a Laravel application
// and ipclock locking "invoice-42" exclude each other.
//
// One connection per held lock. A session may hold many named locks, and a
// second GET_LOCK of a name it holds succeeds at once (the server counts
// it), so that two `Lock`s on one resource exclude each other even in one
// process, each held Key has a session of its own: taken from a small
// per-store pool (or opened) when it acquires, given back when it releases.
// A program that holds many locks at once needs `max_connections` to match.
// Acquire-and-release costs two round trips on an open connection.
//
// Waiting. A timed wait is GET_LOCK's own timeout: the server queues the
// waiter and grants the lock when the holder lets go; nothing here polls.
// MariaDB has no infinite wait (it refuses a negative timeout), and a reply
// that never comes must be noticed, so a long or endless wait is a series
// of GET_LOCKs of at most 30 s each (`wait_slice`), with fractional timeouts where the
// deadline needs them. Between two of them the waiter leaves the server's
// queue for one round trip: waiters are not served in arrival order.
//
// Capabilities: blocking, remote scope. Not shared (GET_LOCK is exclusive
// only), not expiring (a named lock lasts as long as its session), not
// serializable (another process cannot speak on our session), no fencing,
// no owner-death reports.
//
// A lost connection is a lost lock: the server releases a session's named
// locks when the session ends. `CheckHeld` (Lock::CheckAcquired, the watch
// of lock_watch.h) asks `IS_USED_LOCK(name)` on the key's own session and
// expects its own CONNECTION_ID(); a killed session, a server restart or a
// broken connection is Aborted, and the watch hears at once when the server
// closes the socket. A release that finds the lock gone is Aborted.
//
// Limits:
//   * Names are compared byte for byte (on MariaDB 10.11: "Invoice" and
//     "invoice" are two locks, and so are "a" and "a "). MariaDB caps a
//     name at 192 bytes: a name of at most 64 characters that takes more
//     (49 four-byte characters) is refused by the server, as it is for
//     Laravel, and is InvalidArgument here. MySQL caps names at 64
//     characters, which the scheme never exceeds.
//   * A resource that is not valid UTF-8 or holds a NUL byte (which the
//     server would cut the name at) cannot be a Laravel key: it takes the
//     hashed form, with U+FFFD for each byte that is not a character in the
//     24-character prefix (padded with U+FFFD to 24), so that it never
//     meets another resource's lock but through a SHA-1 collision.
//   * A holder that dies on a host that stays up loses its locks at once:
//     its kernel closes the socket and the server ends the session. A host
//     that vanishes (power, network) sends nothing: the server notices only
//     through its own TCP keepalive (the server variables
//     tcp_keepalive_time/_interval/_probes, the kernel's two hours by
//     default) or when wait_timeout ends the silent session. A lock holder
//     sends nothing while it holds, so the store sets its sessions'
//     wait_timeout to a year (the `wait_timeout` option): with the server's
//     default of 8 hours, every lock held longer than that would be lost.
//     Lower it, or set tcp_keepalive_time on the server, to bound how long
//     a vanished host keeps its locks. This side sends keepalive probes
//     after 10 s of silence (3 probes 5 s apart), so a vanished server is
//     noticed within about 25 s.
//   * Do not connect through a proxy that multiplexes sessions (ProxySQL
//     with multiplexing, MaxScale's connection pooling): named locks belong
//     to a server session, which such a proxy hands to other clients.
//   * After fork(), a child must not use its parent's held Keys: the
//     connection and the lock belong to the parent. The store refuses
//     (FailedPrecondition), and pooled connections are never shared with a
//     child.

#ifndef IPCLOCK_MYSQL_STORE_H_
#define IPCLOCK_MYSQL_STORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/store.h"

namespace ipclock {

// Where a MySQL or MariaDB server is and how to log in.
struct MysqlConnectionOptions {
  std::string host = "127.0.0.1";
  int port = 3306;
  // A Unix socket path; when set, `host` must be empty or "localhost".
  std::string unix_socket;
  std::string user;
  std::optional<std::string> password;
  std::string database;
  int connect_timeout_seconds = 10;
  enum class Tls {
    kDisabled,        // plain TCP (or the Unix socket)
    kRequired,        // TLS, server certificate not checked
    kVerifyIdentity,  // TLS, certificate and host name checked
  };
  Tls tls = Tls::kDisabled;
  // CA certificates (PEM) for kVerifyIdentity; empty: the system's.
  std::string tls_ca;
};

struct MysqlAdvisoryStoreOptions {
  MysqlConnectionOptions connection;
  // How a resource becomes a lock name (see "Names" above).
  enum class Scheme {
    kLaravel,  // the resource, or its first 24 characters and SHA-1 past 64
    kSymfony,  // Symfony 8.2's MysqlStore: the SHA-256 hex of the resource
  };
  Scheme scheme = Scheme::kLaravel;
  // Idle connections kept for the next acquisition.
  size_t max_idle = 4;
  // The store's sessions' wait_timeout (see "Limits" above).
  int64_t wait_timeout_seconds = 31536000;
  // The longest single GET_LOCK of a wait (see "Waiting" above): a server
  // or network that stopped answering is noticed this long (plus 15 s)
  // into a wait at the latest. From 10 ms to an hour.
  absl::Duration wait_slice = absl::Seconds(30);
};

// Connects once (to check the server and the credentials; the connection
// then waits in the pool) and returns the store. Unavailable naming the
// server when it cannot be reached, PermissionDenied when it refused the
// credentials, NotFound for a database that does not exist. No message
// contains the password.
absl::StatusOr<std::shared_ptr<Store>> NewMysqlAdvisoryStore(
    const MysqlAdvisoryStoreOptions& options);

// The server's lock name for `resource` in Laravel's scheme (above):
// e.g. "invoice-42" -> "invoice-42"; 65 'a's -> 24 'a's and the SHA-1 hex of
// the 65.
std::string MysqlLockName(absl::string_view resource);

// The server's lock name for `resource` in Symfony 8.2's scheme: 64
// lowercase hex digits of its SHA-256 ("invoice-42" -> "3c304bc2...8ff3";
// vectors in tests/mysql_store_test.cc).
std::string MysqlSymfonyLockName(absl::string_view resource);

}  // namespace ipclock

#endif  // IPCLOCK_MYSQL_STORE_H_
