// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "registry/store_kinds.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/diagnostics.h"
#include "platform/descriptors.h"
#include "registry/degraded_store.h"

namespace ipclock {

std::vector<std::string> SchemesOf(const StoreKinds& kinds) {
  std::vector<std::string> schemes;
  for (const StoreEntry* entry : kinds.entries) {
    if (entry->driver == nullptr) continue;
    for (absl::string_view s : entry->schemes) schemes.emplace_back(s);
  }
  return schemes;
}

absl::Status UnknownStore(const Dsn& dsn, const StoreKinds& kinds) {
  return BadDsn(dsn, absl::StrCat("unknown store '", dsn.scheme(), "' (", kinds.known_as, ": ",
                                  absl::StrJoin(SchemesOf(kinds), ", "), ")"));
}

absl::StatusOr<const StoreEntry*> EntryAmong(const Dsn& dsn, const StoreKinds& kinds) {
  const StoreEntry* found = nullptr;
  for (const StoreEntry* entry : kinds.entries) {
    for (absl::string_view s : entry->schemes) {
      if (s == dsn.scheme()) found = entry;
    }
    if (found != nullptr) break;
  }
  if (found == nullptr) return UnknownStore(dsn, kinds);
  if (found->driver == nullptr) return StoreNotInThisBuild(*found, "its library");
  if (found->driver->client_library != nullptr) {
    if (absl::Status s = found->driver->client_library().Load(found->name); !s.ok()) return s;
  }
  return found;
}

absl::StatusOr<MetricsMode> TakeMetricsOption(Dsn& dsn, MetricsMode default_mode) {
  std::optional<std::string> v = dsn.TakeOption("metrics");
  if (!v) return default_mode;
  if (*v == "on" || *v == "true" || *v == "1") return MetricsMode::kOn;
  if (*v == "off" || *v == "false" || *v == "0") return MetricsMode::kOff;
  if (*v == "every") return MetricsMode::kEvery;
  return BadDsn(dsn, absl::StrCat("option metrics=", *v, ": expected on, off or every"));
}

absl::StatusOr<PreparedStore> PrepareStoreAmong(Dsn& dsn, const StoreOptions& options,
                                                const StoreKinds& kinds) {
  absl::StatusOr<const StoreEntry*> entry = EntryAmong(dsn, kinds);
  if (!entry.ok()) return entry.status();
  return (*entry)->driver->prepare(dsn, options);
}

absl::StatusOr<std::shared_ptr<Store>> BuildStoreAmong(Dsn& dsn, const StoreOptions& options,
                                                       const StoreKinds& kinds) {
  // A degraded mode's remote or fallback may carry its own `metrics=`.
  absl::StatusOr<MetricsMode> metrics = TakeMetricsOption(dsn, options.metrics);
  if (!metrics.ok()) return metrics.status();
  absl::StatusOr<PreparedStore> prepared = PrepareStoreAmong(dsn, options, kinds);
  if (!prepared.ok()) return prepared.status();
  absl::StatusOr<std::shared_ptr<Store>> store = std::move(prepared->build)();
  if (store.ok()) (*store)->SetMetricsMode(*metrics);
  return store;
}

absl::StatusOr<Capabilities> CheckStoreAmong(Dsn& dsn, const StoreOptions& options,
                                             const StoreKinds& kinds) {
  if (absl::StatusOr<MetricsMode> m = TakeMetricsOption(dsn, options.metrics); !m.ok()) {
    return m.status();
  }
  absl::StatusOr<PreparedStore> prepared = PrepareStoreAmong(dsn, options, kinds);
  if (!prepared.ok()) return prepared.status();
  return prepared->capabilities;
}

absl::Status CheckAskedFor(const Dsn& dsn, const Capabilities& caps,
                           const StoreOptions& options) {
  if (options.shared_locks && !caps.shared) {
    return BadDsn(dsn, "shared locks were asked for, and this store has no shared locks");
  }
  if (absl::Status s = CheckLeaseFits(caps, options.lease); !s.ok()) {
    return BadDsn(dsn, s.message());
  }
  if (options.permits > 1 && !caps.counting) {
    return BadDsn(dsn, absl::StrCat(options.permits, " permits were asked for, which needs a "
                                    "counting store (semaphore, posix-semaphore, in-memory)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Store>> StoreFromDsnAmong(absl::string_view text,
                                                         const StoreOptions& options,
                                                         const StoreKinds& kinds) {
  // Before the store opens anything (platform/descriptors.h).
  FillClosedStdio();
  absl::StatusOr<Dsn> dsn = Dsn::Parse(text);
  if (!dsn.ok()) return dsn.status();
  if (WantsDegradedMode(*dsn)) {
    return BadDsn(*dsn, "degraded mode (fallback=, degraded=) builds a store of another "
                        "kind, which needs every store of the build: open this DSN with "
                        "StoreFromDsn() (ipclock_store_open() in C)");
  }
  return OpenPreparedStore(*dsn, options, kinds);
}

absl::StatusOr<std::shared_ptr<Store>> OpenPreparedStore(Dsn& dsn, const StoreOptions& options,
                                                         const StoreKinds& kinds) {
  absl::StatusOr<MetricsMode> metrics = TakeMetricsOption(dsn, options.metrics);
  if (!metrics.ok()) return metrics.status();
  // What the store's driver reports, reading the DSN or building, goes to
  // the store's sink.
  BuildSinkScope scope(options.diagnostics);
  // Every fault the DSN itself carries, before anything is made: the DSN
  // is read once, and what it asks checked against what it gives.
  absl::StatusOr<PreparedStore> prepared = PrepareStoreAmong(dsn, options, kinds);
  if (!prepared.ok()) return prepared.status();
  if (absl::Status s = CheckAskedFor(dsn, prepared->capabilities, options); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<Store>> store = std::move(prepared->build)();
  if (!store.ok()) return store;
  if (options.diagnostics) (*store)->SetDiagnosticSink(options.diagnostics);
  (*store)->SetMetricsMode(*metrics);
  return store;
}

}  // namespace ipclock
