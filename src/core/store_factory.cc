// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The one place that knows every store. Stores are listed here explicitly,
// not registered by static constructors: a static library drops objects
// nobody references, and with them such registrations.

#include "ipclock/store_factory.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dsn.h"
#include "core/removeipc_guard.h"
#include "ipclock/in_memory_store.h"
#include "ipclock_config.h"
#include "stores/combined_store.h"
#include "stores/degraded_store.h"
#include "stores/flock_store.h"
#include "stores/posix_semaphore_store.h"
#include "stores/shm_mutex_store.h"
#include "stores/sysv_semaphore_store.h"
#if IPCLOCK_HAVE_REDIS
#include "stores/redis_store.h"
#else
#include "ipclock/redis_store.h"
#endif
#if IPCLOCK_HAVE_POSTGRES
#include "stores/postgres_store.h"
#endif

namespace ipclock {

namespace {

// Unused in a build that has every optional store.
[[maybe_unused]] absl::Status NotBuilt(const Dsn& dsn, absl::string_view option) {
  return absl::UnimplementedError(absl::StrCat(
      "ipclock: the ", dsn.scheme(), " store is not in this build (Meson option -D",
      option, "=enabled, with its library installed, builds it); no other "
      "store is used in its place"));
}

}  // namespace

std::vector<std::string> SupportedDsnSchemes() {
  std::vector<std::string> schemes = {"flock", "in-memory", "shm",
                                         "semaphore", "posix-semaphore"};
  schemes.push_back("combined");
#if IPCLOCK_HAVE_POSTGRES
  for (const char* s : {"postgresql+advisory", "pgsql+advisory", "postgresql",
                        "postgres"}) {
    schemes.push_back(s);
  }
#endif
  return schemes;
}

absl::StatusOr<std::shared_ptr<Store>> StoreFromDsn(absl::string_view text,
                                                    const StoreOptions& options) {
  absl::StatusOr<Dsn> dsn = Dsn::Parse(text);
  if (!dsn.ok()) return dsn.status();
  // `fallback=`/`degraded=` (stores/degraded_store.h): built again without
  // them, through this function.
  if (WantsDegradedMode(*dsn)) return DegradedStoreFromDsn(text, options);
  // Before any store is built, so that a refused one leaves nothing behind.
  if (absl::Status s = GuardRemoveIpc(*dsn, options); !s.ok()) return s;
  const std::string& scheme = dsn->scheme();
  if (scheme == "combined") return CombinedStoreFromDsn(*dsn, options);
  if (scheme == "flock") return FlockStoreFromDsn(*dsn);
  if (scheme == "shm") return ShmStoreFromDsn(*dsn);
  if (scheme == "semaphore") return SemaphoreStoreFromDsn(*dsn);
  if (scheme == "posix-semaphore") return PosixSemaphoreStoreFromDsn(*dsn);
  if (scheme == "in-memory" || scheme == "memory") {
    if (dsn->has_authority() || !dsn->path().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ipclock: bad DSN \"", dsn->redacted(), "\": in-memory takes no address"));
    }
    if (absl::Status s = dsn->CheckAllOptionsUsed(); !s.ok()) return s;
    return NewInMemoryStore();
  }
  if (scheme == "redis" || scheme == "rediss") {
#if IPCLOCK_HAVE_REDIS
    return RedisStoreFromDsn(*dsn);
#else
    return NotBuilt(*dsn, "redis");
#endif
  }
  if (scheme == "postgresql+advisory" || scheme == "postgres" ||
      scheme == "postgresql" || scheme == "pgsql+advisory") {
#if IPCLOCK_HAVE_POSTGRES
    return PostgresStoreFromDsn(*dsn);
#else
    return NotBuilt(*dsn, "postgres");
#endif
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "ipclock: bad DSN \"", dsn->redacted(), "\": unknown store '", scheme,
      "' (this build knows: ", absl::StrJoin(SupportedDsnSchemes(), ", "), ")"));
}

}  // namespace ipclock
