// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The ZooKeeper store's place in the registry. The store itself
// (zookeeper_lock.h and the files it names) is compiled only when the
// ZooKeeper C client is found (Meson feature `zookeeper`); zookeeper_dsn.cc
// is always compiled, so that a build without it still answers
// `NewZooKeeperStore()` with Unimplemented.

#ifndef IPCLOCK_STORES_ZOOKEEPER_STORE_H_
#define IPCLOCK_STORES_ZOOKEEPER_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock_config.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/stores/zookeeper_store.h"

namespace ipclock {

// Reads a `zookeeper` DSN (include/ipclock/stores/zookeeper_store.h).
absl::StatusOr<ZooKeeperStoreOptions> ZooKeeperOptionsFromDsn(Dsn& dsn);

// `ipclock list`: the lock nodes under the DSN's path, read with a session
// of its own (zookeeper_list.cc).
absl::StatusOr<HeldLocks> ListZooKeeperLocks(Dsn& dsn, const ListRequest& request);

#if IPCLOCK_HAVE_ZOOKEEPER
// NewZooKeeperStore()'s checks of `options`, made before the client sees
// them: values, the path's names, the key naming.
absl::Status CheckZooKeeperOptions(const ZooKeeperStoreOptions& options);

// One server of a server list: "host:port" or "[IPv6 address]:port", the
// host without its brackets. A port that is missing or not a number is 0,
// an unclosed bracket an empty host (CheckZooKeeperOptions() refuses both).
struct ZkServer {
  std::string host;
  int port = 0;
};
ZkServer ParseZkServer(absl::string_view server);

// What a ZooKeeperStore with `options` can do.
Capabilities ZooKeeperCapabilities(const ZooKeeperStoreOptions& options);
#endif

// Its driver and entry (core/store_entry.h), which the registry lists;
// the entry's driver is null in a build without it.
IPCLOCK_STORE_ENTRY(ZooKeeper, Scope::kRemote, std::nullopt, "zookeeper", IPCLOCK_HAVE_ZOOKEEPER,
                    "zookeeper");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ZOOKEEPER_STORE_H_
