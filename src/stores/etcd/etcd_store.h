// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The etcd store's place in the registry. The store itself (etcd_lock.h
// and the files it names) is compiled only with the Meson feature `etcd`;
// etcd_dsn.cc is always compiled, so that a build without it still answers
// `NewEtcdStore()` with Unimplemented.

#ifndef IPCLOCK_STORES_ETCD_STORE_H_
#define IPCLOCK_STORES_ETCD_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/stores/etcd_store.h"
#include "ipclock/admin/inspect.h"
#include "ipclock_config.h"

namespace ipclock {

// Reads an `etcd` or `etcds` DSN (include/ipclock/stores/etcd_store.h).
absl::StatusOr<EtcdStoreOptions> EtcdOptionsFromDsn(Dsn& dsn);

// `ipclock list`: the lock keys under the DSN's prefix, read with a client
// of its own (etcd_list.cc): holders, waiters, their leases' TTL left.
absl::StatusOr<HeldLocks> ListEtcdLocks(Dsn& dsn, const ListRequest& request);

// Its driver and entry (core/store_entry.h), which the registry lists;
// the entry's driver is null in a build without it.
IPCLOCK_STORE_ENTRY(Etcd, Scope::kRemote, std::nullopt, "etcd", IPCLOCK_HAVE_ETCD, "etcd", "etcds");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ETCD_STORE_H_
