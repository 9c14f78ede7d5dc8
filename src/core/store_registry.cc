// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/store_registry.h"

#include "absl/strings/str_cat.h"
#include "stores/combined_store.h"
#include "stores/flock_store.h"
#include "stores/in_memory_store.h"
#include "stores/mysql_store.h"
#include "stores/memcached_store.h"
#include "stores/posix_semaphore_store.h"
#include "stores/postgres_store.h"
#include "stores/redis_store.h"
#include "stores/shm_mutex_store.h"
#include "stores/sysv_semaphore_store.h"
#include "stores/table_store.h"
#include "stores/zookeeper_store.h"

namespace ipclock {
namespace {

constexpr absl::string_view kFlockSchemes[] = {"flock"};
constexpr absl::string_view kShmSchemes[] = {"shm"};
constexpr absl::string_view kSemaphoreSchemes[] = {"semaphore"};
constexpr absl::string_view kPosixSemaphoreSchemes[] = {"posix-semaphore"};
constexpr absl::string_view kInMemorySchemes[] = {"in-memory", "memory"};
constexpr absl::string_view kCombinedSchemes[] = {"combined"};
constexpr absl::string_view kRedisSchemes[] = {"redis", "rediss"};
constexpr absl::string_view kPostgresSchemes[] = {
    "postgresql+advisory", "pgsql+advisory", "postgres+advisory"};
constexpr absl::string_view kMysqlAdvisorySchemes[] = {"mysql+advisory"};
constexpr absl::string_view kPostgresTableSchemes[] = {"postgresql", "postgres", "pgsql"};
constexpr absl::string_view kMysqlTableSchemes[] = {"mysql", "mysql2"};
constexpr absl::string_view kSqliteTableSchemes[] = {"sqlite", "sqlite3"};
constexpr absl::string_view kMemcachedSchemes[] = {"memcached"};
constexpr absl::string_view kZooKeeperSchemes[] = {"zookeeper"};

// name, schemes, scope, what RemoveIPC may delete, Meson feature, driver.
const StoreEntry kRegistry[] = {
    {"flock", kFlockSchemes, Scope::kLocal, IpcKind::kLockDir, "", &kFlockDriver},
    {"shm", kShmSchemes, Scope::kLocal, IpcKind::kPosixShm, "", &kShmDriver},
    {"semaphore", kSemaphoreSchemes, Scope::kLocal, IpcKind::kSysV, "", &kSemaphoreDriver},
    {"posix-semaphore", kPosixSemaphoreSchemes, Scope::kLocal, IpcKind::kPosixShm, "",
     &kPosixSemaphoreDriver},
    {"in-memory", kInMemorySchemes, Scope::kProcess, std::nullopt, "", &kInMemoryDriver},
    {"combined", kCombinedSchemes, Scope::kRemote, std::nullopt, "", &kCombinedDriver},
    {"redis", kRedisSchemes, Scope::kRemote, std::nullopt, "redis", kRedisDriverIfBuilt},
    {"postgresql+advisory", kPostgresSchemes, Scope::kRemote, std::nullopt, "postgres",
     kPostgresDriverIfBuilt},
    {"mysql+advisory", kMysqlAdvisorySchemes, Scope::kRemote, std::nullopt, "mysql",
     kMysqlAdvisoryDriverIfBuilt},
    {"postgresql", kPostgresTableSchemes, Scope::kRemote, std::nullopt, "postgres",
     kPostgresTableDriverIfBuilt},
    {"mysql", kMysqlTableSchemes, Scope::kRemote, std::nullopt, "mysql", kMysqlTableDriverIfBuilt},
    {"sqlite", kSqliteTableSchemes, Scope::kLocal, std::nullopt, "sqlite",
     kSqliteTableDriverIfBuilt},
    {"memcached", kMemcachedSchemes, Scope::kRemote, std::nullopt, "memcached",
     kMemcachedDriverIfBuilt},
    {"zookeeper", kZooKeeperSchemes, Scope::kRemote, std::nullopt, "zookeeper",
     kZooKeeperDriverIfBuilt},
};

}  // namespace

absl::Span<const StoreEntry> StoreRegistry() { return kRegistry; }

const StoreEntry* FindStoreEntry(absl::string_view scheme) {
  for (const StoreEntry& entry : kRegistry) {
    for (absl::string_view s : entry.schemes) {
      if (s == scheme) return &entry;
    }
  }
  return nullptr;
}

absl::Status StoreNotBuilt(const StoreEntry& entry) {
  return absl::UnimplementedError(absl::StrCat(
      "ipclock: the ", entry.name, " store is not in this build (Meson option -D",
      entry.feature, "=enabled, with its library installed, builds it); no "
      "other store is used in its place"));
}

}  // namespace ipclock
