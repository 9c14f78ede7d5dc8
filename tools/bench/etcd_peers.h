// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The floors of the etcd store: round trips to etcd's JSON gateway made
// with nothing but a socket (one kept-alive HTTP/1.1 connection, a
// Content-Length reply), so that the store's own client is measured
// against the server and not against itself. Each returns the median ns
// per operation, or < 0 (with `*why` set) when the member cannot be
// reached or refuses.

#ifndef IPCLOCK_TOOLS_BENCH_ETCD_PEERS_H_
#define IPCLOCK_TOOLS_BENCH_ETCD_PEERS_H_

#include <string>

#include "measure.h"

namespace ipclock_bench {

// One linearizable range read of a key that does not exist, to the first
// member of an etcd://host:port[,...] DSN.
double EtcdRange(const RunShape& shape, const std::string& dsn, std::string* why);
// A put of a key in a transaction that puts only if it is absent, then
// its delete: the two writes (each committed by the cluster) that every
// lock makes.
double EtcdPutDelete(const RunShape& shape, const std::string& dsn, std::string* why);
// The two transactions of the etcd store's uncontended exclusive lock, as
// it sends them: put the lock key (with a lease) and the owner record if
// the queue is empty, reading the old record; then delete the key, and the
// record if it is still ours. The floor of the store's client: the same
// work for the cluster, without the client.
double EtcdLockTransactions(const RunShape& shape, const std::string& dsn, std::string* why);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_ETCD_PEERS_H_
