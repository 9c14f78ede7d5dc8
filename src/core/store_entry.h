// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What one store kind says of itself: the schemes that name it, its scope,
// what systemd-logind or a tmp cleaner may delete of its locks, the Meson
// feature that builds it, and, when this build has it, how to build one
// from a DSN and how to list its locks.
//
// Each store defines its `StoreEntry` in its own header (stores/KIND/), the one
// place its scope and its IPC kind are written: its capabilities, its
// RemoveIPC guard (core/removeipc_guard.h) and `ipclock doctor` read them
// from there. The registry (registry/store_registry.h), the only code that
// knows every store, lists the entries. A store behind a Meson feature
// defines its entry in every build, with a null driver when the feature is
// off, so that its schemes are Unimplemented rather than unknown.

#ifndef IPCLOCK_CORE_STORE_ENTRY_H_
#define IPCLOCK_CORE_STORE_ENTRY_H_

#include <memory>
#include <optional>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/dsn.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "platform/client_library.h"
#include "platform/removeipc.h"

namespace ipclock {

// What a built store provides.
// A store's DSN read once: the capabilities the store will have, and how
// to make it from what was read. Preparing makes nothing (no file, IPC
// object or connection, nothing handed to a client library); `build` does.
struct PreparedStore {
  Capabilities capabilities;
  absl::AnyInvocable<absl::StatusOr<std::shared_ptr<Store>>() &&> build;
};

struct StoreDriver {
  // Reads `dsn` once, taking every option it knows and failing with
  // InvalidArgument on any it does not, and checks every option's value,
  // each file the DSN names (core/named_file.h) and the limits of the
  // store's client library. Returns what it read, ready to build, or the
  // error building would return for the DSN itself.
  absl::StatusOr<PreparedStore> (*prepare)(Dsn& dsn, const StoreOptions& options);
  // The locks held now, for `ipclock list`; nullptr where the store cannot
  // tell. Must not create anything.
  absl::StatusOr<HeldLocks> (*list)(Dsn& dsn, const ListRequest& request);
  // The client library a remote store calls (platform/client_library.h),
  // loaded by the registry before any function above runs; nullptr for
  // a store that needs none.
  ClientLibrary& (*client_library)() = nullptr;
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

// The Unimplemented of a store that this build left out, from its
// New...Store() and from the registry (which knows no library's name, and
// says "its library"): "ipclock: the <name> store is not in this build
// (Meson option -D<feature>=enabled, with <needs> installed, builds it); no
// other store is used in its place", without the "with" where the store
// needs no library.
inline absl::Status StoreNotInThisBuild(const StoreEntry& entry, absl::string_view needs) {
  return absl::UnimplementedError(absl::StrCat(
      "ipclock: the ", entry.name, " store is not in this build (Meson option -D", entry.feature,
      "=enabled", needs.empty() ? " " : absl::StrCat(", with ", needs, " installed, "),
      "builds it); no other store is used in its place"));
}

// Declares a store's driver and entry, in its header:
//
//   IPCLOCK_STORE_ENTRY(Redis, Scope::kRemote, std::nullopt, "redis",
//                       IPCLOCK_HAVE_REDIS, "redis", "rediss");
//
// declares its driver `kRedisDriver` (which the store's .cc defines), its
// schemes `kRedisSchemes` (the canonical one first) and its entry
// `kRedisEntry`. `built` is 1 for a store in every build, else the
// IPCLOCK_HAVE_ macro of the Meson `feature` that builds it (0 or 1, from
// ipclock_config.h): at 0 the entry's driver is null and nothing refers to
// the undefined driver.
#define IPCLOCK_STORE_ENTRY(Id, scope, ipc, feature, built, ...)                        \
  extern const StoreDriver k##Id##Driver;                                             \
  inline constexpr absl::string_view k##Id##Schemes[] = {__VA_ARGS__};                \
  inline constexpr StoreEntry k##Id##Entry = {k##Id##Schemes[0], k##Id##Schemes, scope, \
                                              ipc, feature,                            \
                                              IPCLOCK_STORE_DRIVER_IF_(built, k##Id##Driver)}

// `&driver` if `built` expands to 1, null if it expands to 0.
#define IPCLOCK_STORE_DRIVER_IF_(built, driver) IPCLOCK_STORE_DRIVER_IF_EXPANDED_(built, driver)
#define IPCLOCK_STORE_DRIVER_IF_EXPANDED_(built, driver) IPCLOCK_STORE_DRIVER_IF_##built(driver)
#define IPCLOCK_STORE_DRIVER_IF_1(driver) (&driver)
#define IPCLOCK_STORE_DRIVER_IF_0(driver) nullptr

}  // namespace ipclock

#endif  // IPCLOCK_CORE_STORE_ENTRY_H_
