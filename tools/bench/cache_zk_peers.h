// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The floors of the memcached and ZooKeeper stores: one round trip of the
// server's cheapest request, made with the client library the store uses.
// Each returns the median ns per round trip, or < 0 (with `*why` set) when
// the client is not built in or the server cannot be reached.

#ifndef IPCLOCK_TOOLS_BENCH_CACHE_ZK_PEERS_H_
#define IPCLOCK_TOOLS_BENCH_CACHE_ZK_PEERS_H_

#include <string>

#include "measure.h"

namespace ipclock_bench {

// memcached's `version`, and a `get` of a key that does not exist, through
// libmemcached (text protocol, as the store speaks it) to the server of a
// memcached://host:port DSN.
double MemcachedVersion(const RunShape& shape, const std::string& dsn, std::string* why);
double MemcachedGetMissing(const RunShape& shape, const std::string& dsn, std::string* why);
// exists() of "/" through the ZooKeeper C client (one synchronous call) to
// the servers of a zookeeper://host:port[,...] DSN.
double ZooKeeperExists(const RunShape& shape, const std::string& dsn, std::string* why);
// zoo_create of an ephemeral node and its zoo_delete: the two quorum writes
// (each synced to the server's log) that every ZooKeeper lock makes.
double ZooKeeperCreateDelete(const RunShape& shape, const std::string& dsn, std::string* why);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_CACHE_ZK_PEERS_H_
