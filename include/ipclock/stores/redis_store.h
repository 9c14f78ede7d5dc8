// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/redis_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
//
// Locks on one Redis server (DSN `redis://...`), with leases that the server
// expires on its own clock. Built only with the `redis` Meson feature
// (hiredis); without it `NewRedisStore()` and `redis://` DSNs are
// Unimplemented.
//
//   redis://[user:password@]host[:port][/db]     TCP (port 6379, db 0)
//   redis://password@host  redis://:password@host  the password alone (AUTH)
//   redis:///path/to/redis.sock?db=N             a Unix socket
//
// Query options: connect_timeout, command_timeout (seconds, fractional;
// 5 by default), format=symfony|simple, fencing=true|false,
// tracking=true|false (the watch's client tracking, below), and the naming
// options prefix=, secret=, secret_file=PATH, naming=plain|parse-lock
// (src/core/key_naming.h; `secret=none` says plain names are meant and
// silences the once-per-process warning about them). `rediss://` (TLS) is
// Unimplemented.
//
// Formats (spec/interop.md, "Redis"):
//
//   * `symfony` (default): Symfony Lock 5.2+'s RedisStore format. One sorted
//     set per resource whose members are owner tokens scored with their
//     expiry (ms, server TIME), plus a `__write__` member while a writer holds
//     it; PEXPIREAT at the highest score. Exclusive and shared locks, a sole
//     reader may promote, a writer may demote. A key of string type (the
//     pre-5.2 format, or the `simple` format) counts as held. With no prefix
//     and no secret, PHP applications using Symfony's RedisStore and ipclock
//     exclude each other on the same resource.
//   * `simple`: `SET key token NX PX ttl`, released by compare-and-delete and
//     refreshed by compare-and-pexpire: the format of Parse::Lock, redis-py's
//     Lock and single-instance Redlock clients. Exclusive locks only. A key
//     of any other type counts as held.
//
// Counting semaphores (`SemaphoreStoreFor()`, stores/slot_semaphore_store.h)
// are kept in Symfony Semaphore 5.4's RedisStore layout, whatever the
// format: the sorted sets `{R}:weight` (each holder's token and weight) and
// `{R}:time` (its expiry in whole Unix seconds), so that PHP's
// symfony/semaphore and ipclock count against one limit, both ways. Their
// own connection, made at the first semaphore request. Expiries are the
// server's clock (TIME) here, the client's in PHP: hosts need NTP. A waiter
// of weight above 1 reserves what it waits for, as a member `TOKEN:r` with
// a 3 s expiry renewed while it waits (PHP counts it as a holder), so that
// lighter holders that come and go cannot keep it out; one reserver at a
// time. No death reports, no fences: the layout has no marker for them; a
// killed holder's permits come back when its lease ends. The limit is not
// recorded: holders that disagree may hold more than the smaller one.
//
// Every operation is one round trip: an EVALSHA of a script loaded once per
// connection (SCRIPT LOAD, pipelined with AUTH, SELECT and INFO at connect
// time, loaded again after a NOSCRIPT reply), or a GET for `Exists` in the
// simple format. Acquire + release = 2 round trips in both formats.
//
// Losing a held lock. The server can lose a key while its holder works: a
// DEL or UNLINK, FLUSHALL or FLUSHDB, eviction under maxmemory (any policy
// but noeviction: lock keys carry a TTL, so volatile-* policies pick them
// first), a restart without persistence (or with the latest writes not yet
// saved), a failover to a replica that had not received the key, or the
// lease running out. `Lock::CheckAcquired()` asks in one round trip whether
// the token still owns the key (symfony: our member is there with an expiry
// still ahead on the server's clock; simple: GET is our token), and when it
// does not, the same reply says what the server holds instead, so the
// Aborted status names what happened: the key gone with time left on its
// lease (deleted or evicted), the key and its companion hash gone (the
// database flushed), the server restarted (its run_id, read at connect,
// changed since the lock was taken), the lease run out, another owner
// holding it now (with its fencing token), the key overwritten; and, when
// the server evicts keys, its maxmemory-policy and eviction count. A
// release or refresh that finds the lock gone returns the same kind of
// Aborted, never OK. When the server cannot be asked, the answer is
// Unavailable: the watch on held locks (lock_watch.h) then goes by the
// lease, and reports the loss once it has run out, not before. The watch
// hears of a change to a lock key at once, through Redis client tracking
// (Redis 6 and later; `tracking=false` turns it off): two connections of
// the store's own, one subscribed to `__redis__:invalidate`, the other
// tracking the keys of the watched locks with REDIRECT to it
// (src/stores/redis/redis_tracking.h). A change is checked at once, so a DEL,
// FLUSHALL, eviction or overwrite is reported within a round trip or two;
// the interval check then runs ten times less often, as a safety net. A
// server that refuses tracking (older, or an ACL without CLIENT or the
// channel) is checked at the watch's interval instead. A restart closes
// the connections, which the watch also hears at once. A lock server
// should run with maxmemory-policy noeviction and persistence (appendonly
// yes) if a restart must not free its locks.
//
// Fencing and owner death (`fencing=true`, the default): every lock key K
// has a companion hash `K:ipclock` with two fields, written by the same
// scripts in the same round trip:
//   fence   a counter that HINCRBY grows with every exclusive acquisition;
//           the new value is the key's fencing token.
//   holder  the token of the current exclusive holder. A clean release
//           clears it; a holder that dies (or lets its lease run out) leaves
//           it behind, and the next holder, finding a `holder` that is not a
//           live owner of K, reports previous_owner_died(). Readers report it
//           too; the next writer clears it.
// The hash never expires (the counter must never go back): one small key per
// resource ever locked. `fencing=false` writes no companion key, and the
// store then has neither fencing tokens nor owner-death reports. Symfony and
// the simple-format peers never read `K:ipclock`; a peer that locks a
// resource literally named "K:ipclock" would collide with it (with a secret,
// names are 64 hex digits and cannot).
//
// Leases. A Lock's TTL is sent to the server at each attempt and counts from
// the attempt that succeeds (a long wait does not eat the lease). The
// client's idea of the expiry (`Lock::RemainingLifetime()`) starts before the
// request was sent, so it never outlives the server's. An infinite TTL is
// InvalidArgument: a lock on a server must expire.
//
// Waits poll: Redis has no blocking primitive in these formats. A wait
// retries after 5 ms, doubling to 50 ms, each jittered by +/-25 %, up to its
// deadline. A connection error is retried with a new connection (backoff
// 50 ms doubling to 1 s) until the deadline; a wait never reports "acquired"
// unless the server said so, and when the deadline passes with the server
// unreachable it returns Unavailable naming the server (host:port or socket,
// never the password). A command in flight may overrun a deadline by up to
// command_timeout, a connection attempt by connect_timeout.
//
// Connection. One connection per store, guarded by a mutex: commands of
// threads sharing a store are serialized (a lock round trip is sub-ms on a
// LAN; use several stores for more parallelism). The store connects when it
// is created (so a bad address or password fails there: Unavailable,
// PermissionDenied), reconnects after an error, and notices fork(): a child
// opens its own connection and never touches its parent's. (Forking while
// another thread is inside the store is not supported, as with most
// libraries.) Writes to a dead server never raise SIGPIPE in the program
// (requests go out with send(MSG_NOSIGNAL)).
//
// Limits, honestly:
//   * One server. A failover to a replica, or a restart without persistence,
//     can lose a held lock: this is not Redlock, and a lease can run out
//     while its holder still works. Pass `Lock::fence()` to what the lock
//     protects, so that it can refuse a stale holder.
//   * Redis Cluster is not supported (the lock key and `K:ipclock` may live
//     in different slots).
//   * Scripts need Redis 3.2 or later (effects replication for TIME).

#ifndef IPCLOCK_REDIS_STORE_H_
#define IPCLOCK_REDIS_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/store.h"

namespace ipclock {

struct RedisStoreOptions {
  enum class Format {
    kSymfony,  // sorted sets, exclusive + shared (Symfony Lock 5.2+)
    kSimple,   // SET NX PX strings, exclusive (Parse::Lock, redis-py, Redlock)
  };
  enum class Naming {
    kPlain,      // prefix + resource (or prefix + HMAC hex with a secret)
    kParseLock,  // "parse-stack:lock:v1:" + HMAC hex (or SHA-256 hex)
  };

  // TCP address; ignored when `unix_socket` is set.
  std::string host = "127.0.0.1";
  int port = 6379;
  // Path of the server's Unix socket.
  std::string unix_socket;
  // AUTH: `password` alone, or `user` and `password` (Redis 6 ACL users).
  std::string user;
  std::string password;
  // SELECT; 0 is the server's default.
  int db = 0;
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration command_timeout = absl::Seconds(5);

  Format format = Format::kSymfony;
  // Writes the `K:ipclock` companion hash (fencing tokens, owner death).
  bool fencing = true;
  // The watch on held locks follows them with client tracking (two more
  // connections while a lock is watched); false: it polls at its interval.
  bool tracking = true;

  // Key naming (see src/core/key_naming.h). A prefix or a secret makes the
  // keys unlike a peer's: interop with Symfony or Parse::Lock needs the
  // naming the peer uses.
  Naming naming = Naming::kPlain;
  std::string key_prefix;
  // HMAC-SHA256 secret, at least 16 bytes; empty for none.
  std::string secret;
  // Without a secret, warn once per process on stderr unless this is false
  // (what `secret=none` sets).
  bool warn_without_secret = true;
};

// Connects, authenticates, selects the db and loads the scripts.
// InvalidArgument for bad options, Unavailable when the server cannot be
// reached (naming it), PermissionDenied when it refuses AUTH, Unimplemented
// in a build without the `redis` feature.
absl::StatusOr<std::shared_ptr<Store>> NewRedisStore(
    const RedisStoreOptions& options);

}  // namespace ipclock

#endif  // IPCLOCK_REDIS_STORE_H_
