// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "registry/store_registry.h"

#include "registry/combined_dsn.h"
#include "stores/etcd/etcd_store.h"
#include "stores/flock/flock_store.h"
#include "stores/in_memory/in_memory_store.h"
#include "stores/memcached/memcached_store.h"
#include "stores/mysql/mysql_store.h"
#include "stores/posix_semaphore/posix_semaphore_store.h"
#include "stores/postgres/postgres_store.h"
#include "stores/redis/redis_store.h"
#include "stores/shm/shm_mutex_store.h"
#include "stores/sysv_semaphore/sysv_semaphore_store.h"
#include "stores/table/table_store.h"
#include "stores/zookeeper/zookeeper_store.h"

namespace ipclock {
namespace {

const StoreEntry* const kRegistry[] = {
    &kFlockEntry,
    &kShmEntry,
    &kSemaphoreEntry,
    &kPosixSemaphoreEntry,
    &kInMemoryEntry,
    &kCombinedEntry,
    &kRedisEntry,
    &kPostgresEntry,
    &kMysqlAdvisoryEntry,
    &kPostgresTableEntry,
    &kMysqlTableEntry,
    &kSqliteTableEntry,
    &kMemcachedEntry,
    &kZooKeeperEntry,
    &kEtcdEntry,
};

}  // namespace

absl::Span<const StoreEntry* const> StoreRegistry() { return kRegistry; }

const StoreEntry* FindStoreEntry(absl::string_view scheme) {
  for (const StoreEntry* entry : kRegistry) {
    for (absl::string_view s : entry->schemes) {
      if (s == scheme) return entry;
    }
  }
  return nullptr;
}

}  // namespace ipclock
