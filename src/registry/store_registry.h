// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The registry of stores: the one place that knows every store kind. It
// lists each store's entry (core/store_entry.h: its schemes, scope, what
// systemd-logind may delete of it, its Meson feature and its driver).
// `StoreFromDsn()`, `SupportedDsnSchemes()`, `KnownStores()`,
// `ListHeldLocks()` and `CheckHost()`, all in this layer, read it.
//
// Layers: platform <- core <- stores <- registry <- C API, CLI, tools. The
// registry includes every store's header; nothing below it includes the
// registry. A store that builds other stores from DSNs (a combined store's
// members, a degraded store's fallback) has its DSN part here
// (registry/combined_dsn.h, registry/degraded_store.h).
//
// Adding a store: a folder stores/KIND/ whose header defines its
// `StoreEntry` and whose meson.build adds its files (named in
// stores/meson.build), and one line in store_registry.cc; the other lists
// of stores (feature options, the C API's kinds, the tests' server lists,
// the docs) name it too. A store behind a Meson feature keeps
// its line when the feature is off; its driver pointer is then null and
// every use of its schemes is Unimplemented, never another store in its
// place.
//
// Stores are listed explicitly rather than registered by static
// constructors: a static library drops objects nobody references, and their
// registrations with them.

#ifndef IPCLOCK_REGISTRY_STORE_REGISTRY_H_
#define IPCLOCK_REGISTRY_STORE_REGISTRY_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "registry/store_kinds.h"

namespace ipclock {

// Every store kind, in a fixed order (local stores first).
absl::Span<const StoreEntry* const> StoreRegistry();

// The entry whose schemes include `scheme`, or nullptr.
const StoreEntry* FindStoreEntry(absl::string_view scheme);

// Builds the store that `dsn` names, in degraded mode
// (registry/degraded_store.h) when its options ask for it: the one way from
// a DSN to a store. StoreFromDsn(), the members of a combined store and
// degraded mode's remote and fallback stores all come through here, each
// from a DSN parsed once; nothing turns a Dsn back into text to parse it
// again. Takes the options it reads from `dsn`. What the store's factory
// reports goes to `options.diagnostics`, as does what the store reports.
absl::StatusOr<std::shared_ptr<Store>> BuildStore(Dsn& dsn, const StoreOptions& options);

// The same without degraded mode: `fallback=` and `degraded=`, if `dsn`
// still has them untaken, are unknown options of the store.
absl::StatusOr<std::shared_ptr<Store>> BuildStoreWithoutFallback(
    Dsn& dsn, const StoreOptions& options);

// The stores' DSN checks (StoreDriver::prepare, building nothing) for what
// BuildStore() would build, degraded mode's fallback and a combined store's
// members included, and `options`' needs against the capabilities found.
// CheckDsn() runs it; StoreFromDsn() runs it on a copy of a degraded-mode
// DSN before either store is built (any other DSN is prepared once).
absl::StatusOr<Capabilities> CheckStore(Dsn& dsn, const StoreOptions& options);

// The same without degraded mode, and without `options`' needs.
absl::StatusOr<Capabilities> CheckStoreWithoutFallback(Dsn& dsn, const StoreOptions& options);

}  // namespace ipclock

#endif  // IPCLOCK_REGISTRY_STORE_REGISTRY_H_
