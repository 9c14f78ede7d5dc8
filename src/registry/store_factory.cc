// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/store_factory.h"

#include "absl/strings/str_cat.h"
#include "core/diagnostics.h"
#include "core/dsn.h"
#include "ipclock/admin/inspect.h"
#include "platform/descriptors.h"
#include "registry/degraded_store.h"
#include "registry/list_details.h"
#include "registry/store_kinds.h"
#include "registry/store_registry.h"

namespace ipclock {

namespace {

// Every kind of the registry.
StoreKinds AllKinds() { return StoreKinds{StoreRegistry(), "this build knows"}; }

StoreInfo InfoOf(const StoreEntry& entry) {
  StoreInfo info;
  info.name = std::string(entry.name);
  for (absl::string_view s : entry.schemes) info.schemes.emplace_back(s);
  info.scope = entry.scope;
  info.built = entry.driver != nullptr;
  info.feature = std::string(entry.feature);
  info.listable = info.built && entry.driver->list != nullptr;
  return info;
}

}  // namespace

std::vector<std::string> SupportedDsnSchemes() { return SchemesOf(AllKinds()); }

absl::StatusOr<std::shared_ptr<Store>> BuildStoreWithoutFallback(
    Dsn& dsn, const StoreOptions& options) {
  return BuildStoreAmong(dsn, options, AllKinds());
}

absl::StatusOr<std::shared_ptr<Store>> BuildStore(Dsn& dsn, const StoreOptions& options) {
  // The mode of the store a Lock is made on, a degraded wrapper included.
  absl::StatusOr<MetricsMode> metrics = TakeMetricsOption(dsn, options.metrics);
  if (!metrics.ok()) return metrics.status();
  StoreOptions with_metrics = options;
  with_metrics.metrics = *metrics;
  // What the store's factory reports goes to the store's sink.
  BuildSinkScope scope(options.diagnostics);
  absl::StatusOr<std::shared_ptr<Store>> store =
      WantsDegradedMode(dsn) ? DegradedStoreFromDsn(dsn, with_metrics)
                             : BuildStoreWithoutFallback(dsn, with_metrics);
  if (store.ok() && options.diagnostics) (*store)->SetDiagnosticSink(options.diagnostics);
  if (store.ok()) (*store)->SetMetricsMode(*metrics);
  return store;
}

absl::StatusOr<Capabilities> CheckStoreWithoutFallback(Dsn& dsn,
                                                       const StoreOptions& options) {
  return CheckStoreAmong(dsn, options, AllKinds());
}

absl::StatusOr<Capabilities> CheckStore(Dsn& dsn, const StoreOptions& options) {
  if (absl::StatusOr<MetricsMode> m = TakeMetricsOption(dsn, options.metrics); !m.ok()) {
    return m.status();
  }
  absl::StatusOr<Capabilities> caps = WantsDegradedMode(dsn)
                                          ? CheckDegradedDsn(dsn, options)
                                          : CheckStoreWithoutFallback(dsn, options);
  if (!caps.ok()) return caps;
  if (absl::Status s = CheckAskedFor(dsn, *caps, options); !s.ok()) return s;
  return caps;
}

absl::StatusOr<Capabilities> CheckDsn(absl::string_view text, const StoreOptions& options) {
  absl::StatusOr<Dsn> dsn = Dsn::Parse(text);
  if (!dsn.ok()) return dsn.status();
  return CheckStore(*dsn, options);
}

absl::StatusOr<std::shared_ptr<Store>> StoreFromDsn(absl::string_view text,
                                                    const StoreOptions& options) {
  // Before the store opens anything (platform/descriptors.h).
  FillClosedStdio();
  absl::StatusOr<Dsn> dsn = Dsn::Parse(text);
  if (!dsn.ok()) return dsn.status();
  if (!WantsDegradedMode(*dsn)) return OpenPreparedStore(*dsn, options, AllKinds());
  // Degraded mode: every fault of both DSNs before anything is made (the
  // check reads a copy), then both stores.
  Dsn checked = *dsn;
  if (absl::StatusOr<Capabilities> caps = CheckStore(checked, options); !caps.ok()) {
    return caps.status();
  }
  return BuildStore(*dsn, options);
}

std::vector<StoreInfo> KnownStores() {
  std::vector<StoreInfo> out;
  for (const StoreEntry* entry : StoreRegistry()) out.push_back(InfoOf(*entry));
  return out;
}

absl::StatusOr<StoreInfo> FindStore(absl::string_view text) {
  absl::StatusOr<Dsn> dsn = Dsn::Parse(text);
  if (!dsn.ok()) return dsn.status();
  const StoreEntry* entry = FindStoreEntry(dsn->scheme());
  if (entry == nullptr) return UnknownStore(*dsn, AllKinds());
  return InfoOf(*entry);
}

absl::StatusOr<HeldLocks> ListHeldLocks(absl::string_view text, const ListRequest& request) {
  FillClosedStdio();
  absl::StatusOr<Dsn> dsn = Dsn::Parse(text);
  if (!dsn.ok()) return dsn.status();
  // A DSN that builds a store lists it too: an option about this
  // process's own metrics changes nothing here.
  if (absl::StatusOr<MetricsMode> m = TakeMetricsOption(*dsn, MetricsMode::kOn); !m.ok()) {
    return m.status();
  }
  absl::StatusOr<const StoreEntry*> entry = EntryAmong(*dsn, AllKinds());
  if (!entry.ok()) return entry.status();
  // The DSN's own faults are told as StoreFromDsn() tells them.
  Dsn checked = *dsn;
  if (absl::StatusOr<Capabilities> caps = CheckStoreWithoutFallback(checked, StoreOptions());
      !caps.ok()) {
    return caps.status();
  }
  if ((*entry)->driver->list == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "ipclock: the ", (*entry)->name, " store cannot list its locks from outside",
        (*entry)->scope == Scope::kRemote ? " (ask its server)" : ""));
  }
  absl::StatusOr<HeldLocks> held = (*entry)->driver->list(*dsn, request);
  if (held.ok()) AddProcessDetails(&*held);
  return held;
}

}  // namespace ipclock
