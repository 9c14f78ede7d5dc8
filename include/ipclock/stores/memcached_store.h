// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/memcached_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
//
// Locks on memcached (DSN `memcached://...`), with leases the server expires.
// Built only with the `memcached` Meson feature (libmemcached); without it
// `NewMemcachedStore()` and `memcached://` DSNs are Unimplemented.
//
//   memcached://host[:port][/weight]         TCP (port 11211)
//   memcached:///path/to/memcached.sock      a Unix socket
//   memcached:?host[h1:11211]=1&host[h2:11212]=2   several servers (weights)
//
// These are Symfony's forms (its MemcachedAdapter::createConnection()). Query
// options, with Symfony's names and PHP's units: connect_timeout and
// poll_timeout (milliseconds), send_timeout and recv_timeout (microseconds),
// retry_timeout (seconds), tcp_nodelay, no_block, libketama_compatible
// (true by default, as in Symfony's DSNs), prefix_key (memcached's key
// namespace, as PHP's Memcached::OPT_PREFIX_KEY), weight; serializer and
// compression are accepted and change nothing (a lock's value is a short
// string, which PHP stores unserialized and uncompressed). ipclock's own
// naming options apply too: secret=, secret_file=, prefix= (see
// src/core/key_naming.h; `secret=none` silences the warning about plain
// names). binary_protocol=true and user:password@ (SASL, which needs the
// binary protocol) are refused: memcached deprecates the binary protocol.
//
// Format (spec/interop.md, "Memcached"): the key is the resource itself, the
// value is the owner token (base64 of 32 random bytes), flags 0; acquire is
// `add`; refresh is `gets`, then `cas` of our own token with the new expiry;
// release is `gets`, then `cas` of our token to a 2 s expiry, then `delete`,
// in the order of Symfony's MemcachedStore, so that PHP applications using it
// and ipclock exclude each other on the same resource. Two deliberate
// differences that peers cannot observe: a refresh that finds the key gone
// reports the loss (Aborted) instead of adding it again, and the expiry sent
// is one second longer than the lease (below).
//
// Keys. memcached's text protocol takes keys of at most 250 bytes with no
// spaces or control bytes. A resource (with the prefix) that cannot be such
// a key is refused with InvalidArgument, never altered: a different key
// would not exclude a peer. With a secret the key is 64 hex digits, so any
// resource fits.
//
// Leases. memcached counts expiry in whole seconds on a clock that ticks once
// a second, so a key stored with an expiry of N seconds lives more than N-1
// and at most N seconds. The store sends ceil(ttl) + 1 seconds, so that the
// key outlives the lease the client counts (from before the request was
// sent); a dead holder's lock lasts up to 2 s longer than its TTL. An
// infinite TTL, or one over 30 days (which memcached would read as a date),
// is InvalidArgument.
//
// Eviction. memcached is a cache: under memory pressure it evicts the least
// recently used keys, a held lock's key among them, and a restart or
// `flush_all` drops every key. The lock is then silently gone and another
// process can take it while its holder still works. Nothing on the server
// says so; the holder learns it at its next check (`Lock::CheckAcquired()`,
// the watch on held locks within its interval, 1 s by default, asking once
// a round, by one multi-get, for the keys of every lock the store holds) or
// refresh,
// as Aborted. Give memcached memory to spare, or use `-M` (refuse stores
// instead of evicting) on a server that holds locks, and pass nothing that
// needs stronger guarantees through it: there is no fencing token.
//
// Several servers. Each key lives on one server, chosen by consistent
// hashing (libketama, as Symfony's DSNs set it up); every client of a lock
// must list the same servers with the same weights, or they pick different
// servers for the same key and exclude nothing. Automatic ejection of failed
// servers stays off: a client that could not reach a server would move its
// keys to another one and take locks that are still held there. A lock whose
// server is down is Unavailable, never granted elsewhere; a lock whose server
// restarts is lost (above).
//
// Owner death (`record=true`, the default). A killed holder's key stays
// until its expiry, after which memcached forgets it: the next `add`
// cannot tell it from a released key. So each lock key K has a companion
// key `K:ipclock`, without expiry, holding the token of the holder that
// took K and cleared to "" by its clean release (before K's own release);
// a new holder that finds another token there was preceded by a holder
// that never released, and is told (`previous_owner_died()`). It costs two
// round trips per acquisition and two per release; `record=false` writes
// no companion and reports no death. What it cannot see: a companion key
// evicted or flushed (memcached is a cache), a key name of more than 242
// bytes (no room for the suffix), and PHP holders, which write none. A peer
// that locks a resource literally named "K:ipclock" would collide with it
// (with a secret, names are 64 hex digits and cannot).
//
// Waits poll: memcached has no blocking primitive. A wait retries after
// 5 ms, doubling to 50 ms, each jittered by +/-25 %; a server error is
// retried with backoff (50 ms doubling to 1 s) until the deadline, then
// reported as Unavailable. One connection per server per store, guarded by
// a mutex; a forked child opens its own and never talks on its parent's.
// Acquire + release = 1 + 3 round trips (add; gets, cas, delete).

#ifndef IPCLOCK_MEMCACHED_STORE_H_
#define IPCLOCK_MEMCACHED_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/store.h"

namespace ipclock {

struct MemcachedStoreOptions {
  struct Server {
    // A host name or address, or the path of a Unix socket (starting '/').
    std::string host = "127.0.0.1";
    int port = 11211;  // ignored for a socket
    int weight = 0;    // 0: libmemcached's default weight
  };
  std::vector<Server> servers;

  // libmemcached's behaviours, in PHP's units; 0 keeps libmemcached's
  // default.
  int connect_timeout_ms = 1000;
  int poll_timeout_ms = 1000;
  int send_timeout_us = 0;
  int recv_timeout_us = 0;
  int retry_timeout_s = 2;
  bool tcp_nodelay = true;
  bool no_block = true;
  // Consistent hashing as libketama (PHP's OPT_LIBKETAMA_COMPATIBLE); false
  // is libmemcached's (and PHP's plain Memcached's) modulo distribution.
  bool libketama_compatible = true;

  // memcached's key namespace (PHP's OPT_PREFIX_KEY): on the server the key
  // is prefix_key + name, and servers are chosen by the name alone.
  std::string prefix_key;
  // ipclock's naming (src/core/key_naming.h): name = prefix + resource, or
  // prefix + hex(HMAC-SHA256(secret, resource)).
  std::string name_prefix;
  std::string secret;
  bool warn_without_secret = true;

  // Keeps the holder marker `K:ipclock` (owner-death reports; above).
  bool holder_record = true;
};

// Connects to the servers and checks that each answers (`version`).
// InvalidArgument for bad options, Unavailable when a server cannot be
// reached (naming it), Unimplemented in a build without the `memcached`
// feature.
absl::StatusOr<std::shared_ptr<Store>> NewMemcachedStore(
    const MemcachedStoreOptions& options);

}  // namespace ipclock

#endif  // IPCLOCK_MEMCACHED_STORE_H_
