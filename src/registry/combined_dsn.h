// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The combined store's DSN (include/ipclock/stores/combined_store.h, "DSN"): its
// members are built by StoreFromDsn(), so this part of the combined store
// sits in the registry's layer, above the stores it combines. The store
// itself (NewCombinedStore()) is stores/combined/combined_store.cc.

#ifndef IPCLOCK_REGISTRY_COMBINED_DSN_H_
#define IPCLOCK_REGISTRY_COMBINED_DSN_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/stores/combined_store.h"
#include "ipclock/store_factory.h"

namespace ipclock {

// Builds a combined store from a parsed `combined` DSN: option `strategy`
// (consensus, the default, or unanimous) and members `store1`, `store2`, ...
// each parsed once and built by BuildStore() with `options`.
absl::StatusOr<std::shared_ptr<Store>> CombinedStoreFromDsn(
    Dsn& dsn, const StoreOptions& options);

// Its entry's driver (with its DSN check: the members' own checks, and the
// capabilities they give the combined store), and its entry
// (core/store_entry.h). The scope is the widest a combined store can have;
// each one's capabilities say its own (the narrowest member's).
IPCLOCK_STORE_ENTRY(Combined, Scope::kRemote, std::nullopt, "", 1, "combined");

}  // namespace ipclock

#endif  // IPCLOCK_REGISTRY_COMBINED_DSN_H_
