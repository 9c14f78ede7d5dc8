// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The registry of stores: the one place that knows every store kind. Each
// entry says what schemes name the store, its scope, what systemd-logind may
// delete of it, which Meson feature builds it, and, when this build has it,
// how to build one from a DSN and how to list its locks. `StoreFromDsn()`,
// `SupportedDsnSchemes()`, `KnownStores()`, `ListHeldLocks()` and the
// RemoveIPC guard all read it.
//
// Adding a store: one file pair in stores/ that defines a `StoreDriver`, and
// one line in store_registry.cc. A store behind a Meson feature keeps its
// line when the feature is off; its driver pointer is then null and every
// use of its schemes is Unimplemented, never another store in its place.
//
// Stores are listed explicitly rather than registered by static
// constructors: a static library drops objects nobody references, and their
// registrations with them.

#ifndef IPCLOCK_CORE_STORE_REGISTRY_H_
#define IPCLOCK_CORE_STORE_REGISTRY_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/dsn.h"
#include "ipclock/inspect.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "platform/removeipc.h"

namespace ipclock {

// What a built store provides.
struct StoreDriver {
  // Builds the store from its parsed DSN. Takes every option it knows from
  // `dsn` and fails with InvalidArgument on any it does not.
  absl::StatusOr<std::shared_ptr<Store>> (*from_dsn)(Dsn& dsn,
                                                     const StoreOptions& options);
  // The locks held now, for `ipclock list`; nullptr where the store cannot
  // tell. Must not create anything.
  absl::StatusOr<HeldLocks> (*list)(Dsn& dsn, const ListRequest& request);
};

struct StoreEntry {
  absl::string_view name;  // canonical scheme
  // Every scheme that names this store, `name` first.
  absl::Span<const absl::string_view> schemes;
  Scope scope;
  // What systemd-logind's RemoveIPC or a tmp cleaner may delete of its
  // locks (checked by the store's factory, and by `ipclock doctor`);
  // nullopt for stores it leaves alone.
  std::optional<IpcKind> ipc;
  // The Meson feature that builds it; empty for stores in every build.
  absl::string_view feature;
  // nullptr when this build left the store out.
  const StoreDriver* driver;
};

// Every store kind, in a fixed order (local stores first).
absl::Span<const StoreEntry> StoreRegistry();

// The entry whose schemes include `scheme`, or nullptr.
const StoreEntry* FindStoreEntry(absl::string_view scheme);

// Unimplemented, naming the store and the Meson feature that builds it.
absl::Status StoreNotBuilt(const StoreEntry& entry);

}  // namespace ipclock

#endif  // IPCLOCK_CORE_STORE_REGISTRY_H_
