// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: etcd_store.h
// -----------------------------------------------------------------------------
//
// Locks on an etcd cluster (DSN `etcd://...`, `etcds://...` for TLS), in
// the layout of etcd's own `concurrency.Mutex`, so that `etcdctl lock NAME`
// and every Go program locking with `concurrency.Mutex` exclude ipclock and
// are excluded by it, queueing with it in one order. For gateways that
// grow into a cluster: etcd replicates every change to a majority before it
// answers, so a lock survives the loss of a minority of members. Built
// with the `etcd` Meson feature (it needs no client library: see
// doc/stores.md for why); without it `NewEtcdStore()` and the DSNs are
// Unimplemented.
//
//   etcd://host:port[,host:port...][/prefix][?options]
//   etcds://host:port[,host:port...][/prefix]?cacert=CA.pem&cert=C.pem&key=K.pem
//
// The members are tried in the order given; a member that cannot be
// reached, or that has no leader, passes requests to the next. `prefix`
// is where the locks go: `/locks` puts resource R's lock at `locks/R`,
// which is what `etcdctl lock locks/R` takes. Without a path the prefix is
// `ipclock`; a path of `/` alone is no prefix (resource R is `etcdctl lock
// R`). Options:
//   ttl=SECS              the lease's TTL (60; whole seconds, at least 1;
//                         the cluster raises it to its own minimum, 2 s
//                         with etcd's default timings). A holder that dies
//                         keeps its locks for up to this long.
//   connect_timeout=SECS  to connect to a member (5)
//   timeout=SECS          the longest a request waits for its answer (5)
//   cacert=, cert=, key=  etcds:// only: the CA bundle (PEM; the system's
//                         when absent), and the client's certificate and
//                         key for clusters that ask for one (etcd's
//                         --client-cert-auth); etcdctl's flag names
//   insecure_skip_tls_verify=true   etcds:// without checking the server's
//                         certificate (throwaway test clusters only)
// IPv6 addresses are written in brackets and only as a single member
// ("etcd://[::1]:2379/locks").
//
// Layout (concurrency.Mutex, which `etcdctl lock` uses). Let P be
// `prefix/ENC(R)`, where ENC writes '%' as %25 and '/' as %2F and keeps
// every other byte (so one resource's keys never lie under another's):
//   * An exclusive lock is the key `P/<lease ID in lowercase hex>`, put
//     with the lease in a transaction that succeeds only if the key has no
//     create revision. The holder is the key under `P/` with the lowest
//     create revision; a waiter watches only the key created just before
//     its own (a release wakes one waiter, and the queue is served in
//     creation order, waiters of every client together), and a waiter
//     that gives up deletes its key.
//   * A shared lock is the key `P/read/<unique>` of etcd's recipes
//     (`recipe.RWMutex`). A reader holds while no older key under `P/`
//     other than readers' is left; a writer waits for every older key,
//     readers' included. Go's RWMutex writers (`P/write/...`) interoperate
//     both ways; Go's RWMutex readers do not see Mutex-layout writers
//     (theirs, etcdctl's or ours): etcd's two recipes do not exclude each
//     other, whoever uses them.
//   * The key `P` itself is the owner record: an exclusive holder writes its
//     key's name there and a clean release deletes it with the key, in one
//     transaction. The next holder that finds a record left behind reports
//     `previous_owner_died()`: the holder's lease ended (it died, or was
//     cut off for longer than the TTL) or its key was deleted under it.
//     `etcdctl lock` and Go keep no record: their deaths are not reported,
//     and they leave ours as it is; a holder whose previous holder was
//     theirs (a writer's key older than its own went after the dead
//     holder's, as etcd's history of the keys shows) is not told. Where
//     the cluster compacted that history away, the death is told.
// The fencing token is the revision at which the lock became ours: that
// of the transaction that put our key into an empty queue, or that found
// our key first after a wait. It is what `etcdctl lock` gives its command
// as ETCD_LOCK_REV (concurrency.Mutex's header revision when it saw itself
// first), and it lies after the deletion of the previous holder's key, so
// that fences grow from one holder to the next whichever client took the
// lock: ours, etcdctl's and Go's Mutex holders' are ordered together. The
// key's create revision does not grow so: a key that queued behind a
// holder was created before that holder's own token. `ipclock run`
// exports the fence as ETCD_LOCK_REV, and the key as ETCD_LOCK_KEY, the
// names `etcdctl lock` gives its command.
//
// Leases. A store grants one lease per process (a forked child grants its
// own) with the DSN's TTL, and puts its keys with it; two Locks of one
// process on one resource need two keys, so a second lease is granted when
// the first already holds a key for that resource. etcd deletes a lease's
// keys when it expires or is revoked: every lock on it is then lost. The
// store's locks are expiring locks: a lease is renewed (a keep-alive) by
// `Lock::Refresh()`, by the watch on held locks (lock_watch.h, which
// `ipclock run` uses) at a third of the shorter of the Lock's TTL and the
// lease's, and by a wait in progress. A lock whose lease nobody renews is
// lost after the TTL; `LockOptions::ttl` can only make a Lock give up
// earlier (it counts as expired and its key is deleted at the next check),
// never keep its key longer than the lease. Caveat: the lease is the
// store's, so any renewal keeps all its keys: a holder that stopped
// renewing one lock loses it only when the whole lease runs out.
// The store revokes its leases when it is destroyed (`ipclock run` does as
// it exits); between locks it keeps its lease, unrenewed while it holds
// nothing, for the next acquisition: a revocation at each release and a
// grant at the next acquisition would be two more writes per lock.
//
// Losses. A held lock's key is watched (a watch stream of its own) once
// the watch on held locks follows it, so its deletion (a revoked or
// expired lease, `etcdctl del`) is reported at once, as Aborted naming
// what happened. While etcd cannot be reached, or answers without a
// quorum, checks report Unavailable, not a loss: the lease may still be
// alive. Once the TTL has passed since the last renewal etcd answered, the
// cluster has expired the lease or is about to, and the lock is reported
// lost whether or not etcd can say so.
//
// Cost: an uncontended acquisition is one transaction, a release one; a
// contended one queues its key (one more) and, once first, records itself
// (one more). Every one is a write that the cluster commits to a majority
// of members' disks. Locks are tied to the process's lease: not
// serializable.
//
// Names are plain (P is readable in `etcdctl get --prefix`), since they
// are what `etcdctl lock` and Go programs take: keep other tenants of the
// cluster away from the prefix with etcd's own roles (`etcdctl role
// grant-permission --prefix`).

#ifndef IPCLOCK_ETCD_STORE_H_
#define IPCLOCK_ETCD_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"

namespace ipclock {

struct EtcdStoreOptions {
  // "host:port[,host:port...]"; an IPv6 address in brackets, alone.
  std::string endpoints = "127.0.0.1:2379";
  // Where the locks go (no leading '/'); empty for none.
  std::string prefix = "ipclock";
  // The lease's TTL: whole seconds, at least 1.
  absl::Duration ttl = absl::Seconds(60);
  absl::Duration connect_timeout = absl::Seconds(5);
  // How long a request waits for its answer; a held lock's renewal or check
  // waits no later than the moment its lease may expire, whichever is first.
  absl::Duration request_timeout = absl::Seconds(5);

  // etcds://: TLS on every connection.
  bool tls = false;
  std::string ca_file;    // PEM; empty: the system's bundle
  std::string cert_file;  // client certificate (PEM), with key_file
  std::string key_file;
  bool verify_server = true;
};

// Connects and grants the lease. InvalidArgument for bad options,
// Unavailable when no member answers (or none has a leader) in time,
// PermissionDenied for a refused TLS certificate, Unimplemented in a build
// without the `etcd` feature, or for etcds:// in one without mbedTLS's TLS
// library.
absl::StatusOr<std::shared_ptr<Store>> NewEtcdStore(const EtcdStoreOptions& options);

// Where a held lock of an etcd store lives: what `ipclock run` tells its
// command as ETCD_LOCK_KEY and ETCD_LOCK_REV (the names and the meanings
// `etcdctl lock` gives them).
struct EtcdHeldKey {
  std::string key;       // e.g. "locks/job/694d7a3c1f2b0e05"
  int64_t revision = 0;  // when the lock became ours (the fencing token)
  int64_t lease = 0;
  // The key's create revision, for a transaction that compares it (as
  // concurrency.Mutex's IsOwner() does) to act only while the key lives.
  int64_t create_revision = 0;
};

// The key of `lock`, if it is held on an etcd store; nullopt otherwise (any
// other store, a lock not held, a build without etcd).
std::optional<EtcdHeldKey> EtcdHeldKeyOf(const Lock& lock);

}  // namespace ipclock

#endif  // IPCLOCK_ETCD_STORE_H_
