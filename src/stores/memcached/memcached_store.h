// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The memcached store's place in the registry. memcached_store.cc (the store)
// and memcached_options.cc (its checks of what it is given) are compiled
// only when libmemcached is found (Meson feature `memcached`);
// memcached_dsn.cc (the DSN forms) is always compiled, so that a build
// without it still answers `NewMemcachedStore()` with Unimplemented.

#ifndef IPCLOCK_STORES_MEMCACHED_STORE_H_
#define IPCLOCK_STORES_MEMCACHED_STORE_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock_config.h"
#include "ipclock/stores/memcached_store.h"

namespace ipclock {

// A limit of libmemcached, checked before it sees the servers: past 100
// servers its consistent hashing aborts the process (an assertion). (It
// also refuses host names over 1024 bytes; IsHostName() takes 253.)
inline constexpr size_t kMemcachedMaxServers = 100;

// Its driver and entry (core/store_entry.h), which the registry lists; the
// entry's driver is null in a build without it. The driver builds a
// MemcachedStore from a parsed `memcached` DSN (see
// include/ipclock/stores/memcached_store.h for the forms and options).
IPCLOCK_STORE_ENTRY(Memcached, Scope::kRemote, std::nullopt, "memcached", IPCLOCK_HAVE_MEMCACHED,
                    "memcached");

}  // namespace ipclock

#endif  // IPCLOCK_STORES_MEMCACHED_STORE_H_
