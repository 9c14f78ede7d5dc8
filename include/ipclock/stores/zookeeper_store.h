// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/zookeeper_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
//
// Locks on a ZooKeeper ensemble (DSN `zookeeper://...`): the one store here
// whose locks stay correct when a server fails, since ZooKeeper replicates
// every change to a majority before it answers. Built only with the
// `zookeeper` Meson feature (the ZooKeeper C client, libzookeeper_mt);
// without it `NewZooKeeperStore()` and `zookeeper://` DSNs are
// Unimplemented.
//
//   zookeeper://host:port[,host:port...][/path][?options]
//
// `path` is where the lock nodes go (created, with its parents, when
// missing): /ipclock by default, or the root for format=symfony. Options:
//   format=recipe|symfony  the node layout (below); recipe by default
//   session_timeout=SECS   the session timeout asked for (10 by default;
//                          the servers clamp it to [2, 20] x their tickTime)
//   connect_timeout=SECS   how long to wait for a session when the store is
//                          made, or made again after one expired (5)
//   prefix=, secret=, secret_file=   naming (src/core/key_naming.h): with a
//                          secret a resource is named by a 64-digit HMAC;
//                          `secret=none` silences the warning about plain
//                          names, which every client of the ensemble can list
// A list of servers is one ensemble (the client picks one and moves on
// when it fails). IPv6 addresses are accepted only as a single server
// ("zookeeper://[::1]:2181").
//
// Formats:
//
//   * `recipe` (default): ZooKeeper's own lock recipe (the docs' "Locks" and
//     "Shared Locks"). A resource R has a node P = path/ENC(R), where ENC
//     keeps [A-Za-z0-9._-] and writes every other byte as %XX (so any bytes
//     can be a resource, and `ipclock list` reads R back); P is a container
//     node, which the servers delete once it is empty. Each acquisition
//     creates an EPHEMERAL_SEQUENTIAL child "write-ID-SEQ" (exclusive) or
//     "read-ID-SEQ" (shared), ID a random tag of this attempt. A writer holds
//     the lock when no child has a lower SEQ; a reader when no "write-"
//     child has. A waiter watches only the next lower node that blocks it,
//     so a release wakes one waiter (no herd), waits sleep on the server
//     without polling, and the lock goes in FIFO order. The fencing token is
//     the creation zxid of the holder's node: ZooKeeper orders every change,
//     so it grows with every exclusive holder, across restarts of P and
//     leader elections. Converting a held lock (a sole reader promoting, a
//     writer demoting) atomically replaces its node by one of the other
//     kind at the end of the queue (a multi-op): it waits behind anyone
//     already queued, and a conversion that fails has given up the lock it
//     held, as a flock conversion does.
//   * `symfony`: Symfony Lock's ZookeeperStore layout: an EPHEMERAL node
//     path/N whose data is the owner token, where N is the resource, or,
//     for a resource with '/', the resource with '/' replaced by '-', then
//     '-', then its SHA-1 in hex. PHP applications using Symfony's
//     ZookeeperStore and ipclock exclude each other on the same resource.
//     Exclusive locks only. Waiters set a watch on the node and wake when it
//     goes (every waiter wakes at each release: Symfony's layout has one node
//     per resource). Resources ZooKeeper cannot name this way (control
//     bytes, invalid UTF-8, "." and "..", "zookeeper" at the root) are
//     InvalidArgument. The fence is the node's creation zxid.
//
// Sessions. A store keeps one ZooKeeper session (the client's two threads,
// which start with every signal blocked). Ephemeral nodes live as long as
// the session: a holder that dies, or is cut off from the ensemble for
// longer than the session timeout, loses its locks when the servers expire
// the session, and the next holder gets the lock then (not at the death: a
// killed holder's lock lasts up to one session timeout). The client follows
// ZooKeeper's rules for a lost connection: while disconnected, the session
// and its locks may still be alive, so `Lock::CheckAcquired()` and the watch
// on held locks report Unavailable, not a loss; once the session timeout
// has passed since the servers last answered one of this store's requests,
// the session has expired on the servers whether or not the client has
// heard so, and the lock is reported lost (Aborted), as it is at once when
// the client hears of the expiry, or when its node is deleted (`zkCli.sh
// delete`). A holder is never told "lost" while its node is known to exist,
// nor "held" past the time its session could have expired. The watch hears
// of session events and of its node's deletion at once (an eventfd that the
// client's thread signals); while connected, a check is one exists()
// round trip. After an expiry the store opens a new session for new
// acquisitions. A forked child opens its own session and never touches its
// parent's (nor releases the parent's locks). Caveat: glibc's getaddrinfo()
// is not fork-safe, and the client resolves the server names again after a
// lost connection; a fork() at that moment can leave the child unable to
// resolve names (its first session then hangs). The store asks the client
// not to re-resolve names otherwise (by default it does so continually).
//
// Owner death (recipe format): an exclusive holder records its node's name
// in a persistent child "owner" of P, and a clean release deletes both in
// one multi-op. The next holder that finds "owner" left behind reports
// previous_owner_died(): the holder's session ended (it died, or was cut off
// past the session timeout) or its node was deleted while it held the lock.
// That is what ipclock chose "death" to mean here: ZooKeeper cannot tell a
// crashed process from one that lost its session, and for what the lock
// protects both are the same, a holder stopped at an unknown point.
// Readers report it too; the next writer clears it. A holder that dies in
// the one round trip between getting the lock and recording itself is not
// reported (it had not been told it held the lock). The symfony format has
// no owner death.
//
// Deadlines. A wait ends at its deadline, but a request in flight then may
// take up to two thirds of the session timeout to fail (the client's limit
// on a silent server), and opening a new session (the first use after an
// expiry or a fork) up to connect_timeout. A ZooKeeper that cannot be
// reached is Unavailable, never "busy"; servers that all refuse the
// connection (nothing listens there) are Unavailable after about 0.2 s,
// however long connect_timeout is (doc/stores.md says how that is told).
//
// Cost: an uncontended acquire is 3 round trips (create, getChildren, the
// owner record; readers 2), a release 1 (a multi-op); symfony format: 1 and
// 2 (exists + delete, checking it is still our node). Locks are tied to the
// session: not serializable.
//
// ACLs: nodes are created world-readable and -writable (OPEN_ACL_UNSAFE), as
// Symfony's are. Anyone who can reach the ensemble can delete a lock node;
// the holder then hears of it (above), but cannot undo it.

#ifndef IPCLOCK_ZOOKEEPER_STORE_H_
#define IPCLOCK_ZOOKEEPER_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/store.h"

namespace ipclock {

struct ZooKeeperStoreOptions {
  enum class Format {
    kRecipe,   // sequential children, exclusive + shared, FIFO, owner death
    kSymfony,  // one ephemeral node per resource (Symfony's ZookeeperStore)
  };

  // "host:port[,host:port...]", as the ZooKeeper client takes it.
  std::string servers = "127.0.0.1:2181";
  // Absolute; empty for the format's default (/ipclock, or / for symfony).
  std::string path;
  Format format = Format::kRecipe;
  absl::Duration session_timeout = absl::Seconds(10);
  absl::Duration connect_timeout = absl::Seconds(5);

  // Naming (src/core/key_naming.h).
  std::string name_prefix;
  std::string secret;
  bool warn_without_secret = true;
};

// Opens a session and checks (creating it if missing) the path.
// InvalidArgument for bad options, Unavailable when no server answers
// within connect_timeout, Unimplemented in a build without the `zookeeper`
// feature.
absl::StatusOr<std::shared_ptr<Store>> NewZooKeeperStore(
    const ZooKeeperStoreOptions& options);

}  // namespace ipclock

#endif  // IPCLOCK_ZOOKEEPER_STORE_H_
