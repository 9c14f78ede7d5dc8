// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/store_factory.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dsn.h"
#include "core/store_registry.h"
#include "ipclock/inspect.h"
#include "stores/degraded_store.h"

namespace ipclock {

std::vector<std::string> SupportedDsnSchemes() {
  std::vector<std::string> schemes;
  for (const StoreEntry& entry : StoreRegistry()) {
    if (entry.driver == nullptr) continue;
    for (absl::string_view s : entry.schemes) schemes.emplace_back(s);
  }
  return schemes;
}

namespace {

absl::StatusOr<const StoreEntry*> EntryFor(const Dsn& dsn) {
  const StoreEntry* entry = FindStoreEntry(dsn.scheme());
  if (entry == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: bad DSN \"", dsn.redacted(), "\": unknown store '",
        dsn.scheme(), "' (this build knows: ",
        absl::StrJoin(SupportedDsnSchemes(), ", "), ")"));
  }
  if (entry->driver == nullptr) return StoreNotBuilt(*entry);
  return entry;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> StoreFromDsn(absl::string_view text,
                                                    const StoreOptions& options) {
  absl::StatusOr<Dsn> dsn = Dsn::Parse(text);
  if (!dsn.ok()) return dsn.status();
  // `fallback=`/`degraded=` (stores/degraded_store.h): built again without
  // them, through this function.
  if (WantsDegradedMode(*dsn)) return DegradedStoreFromDsn(text, options);
  absl::StatusOr<const StoreEntry*> entry = EntryFor(*dsn);
  if (!entry.ok()) return entry.status();
  return (*entry)->driver->from_dsn(*dsn, options);
}

std::vector<StoreInfo> KnownStores() {
  std::vector<StoreInfo> out;
  for (const StoreEntry& entry : StoreRegistry()) {
    StoreInfo info;
    info.name = std::string(entry.name);
    for (absl::string_view s : entry.schemes) info.schemes.emplace_back(s);
    info.scope = entry.scope;
    info.built = entry.driver != nullptr;
    info.feature = std::string(entry.feature);
    info.listable = info.built && entry.driver->list != nullptr;
    out.push_back(std::move(info));
  }
  return out;
}

absl::StatusOr<std::vector<HeldLock>> ListHeldLocks(absl::string_view text,
                                                    const ListRequest& request) {
  absl::StatusOr<Dsn> dsn = Dsn::Parse(text);
  if (!dsn.ok()) return dsn.status();
  absl::StatusOr<const StoreEntry*> entry = EntryFor(*dsn);
  if (!entry.ok()) return entry.status();
  if ((*entry)->driver->list == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "ipclock: the ", (*entry)->name,
        " store cannot list its locks from outside"));
  }
  return (*entry)->driver->list(*dsn, request);
}

}  // namespace ipclock
