// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// From a DSN to a store among a given set of store kinds: what
// StoreFromDsn() does over the whole registry, done over the few kinds a
// program names. Nothing here refers to the registry, so a static program
// that opens its stores this way (the C API's ipclock_store_open_kinds())
// links the stores it names and no other: a flock lock does not bring the
// SQL, Redis or ZooKeeper stores, nor the user lookups of the other local
// stores' RemoveIPC checks, into the binary.
//
// StoreFromDsn() (store_factory.cc) is built on the same functions, with
// every kind of the registry, so that the two say the same of the same DSN.

#ifndef IPCLOCK_REGISTRY_STORE_KINDS_H_
#define IPCLOCK_REGISTRY_STORE_KINDS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/metrics.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"

namespace ipclock {

// The kinds a DSN may name, and how an unknown scheme's message names them:
// "unknown store 'x' (<known_as>: flock, shm)".
struct StoreKinds {
  absl::Span<const StoreEntry* const> entries;
  absl::string_view known_as;
};

// The DSN schemes of the kinds that this build has.
std::vector<std::string> SchemesOf(const StoreKinds& kinds);

// InvalidArgument: `dsn`'s scheme is none of `kinds`'.
absl::Status UnknownStore(const Dsn& dsn, const StoreKinds& kinds);

// The entry of `kinds` that `dsn`'s scheme names, with its client library
// loaded: InvalidArgument for a scheme none of them has, Unimplemented for
// a kind this build left out (StoreNotInThisBuild(), core/store_entry.h).
absl::StatusOr<const StoreEntry*> EntryAmong(const Dsn& dsn, const StoreKinds& kinds);

// Takes the `metrics=` option, which every store takes (ipclock/metrics.h).
absl::StatusOr<MetricsMode> TakeMetricsOption(Dsn& dsn, MetricsMode default_mode);

// BuildStoreWithoutFallback() and CheckStoreWithoutFallback()
// (store_registry.h) among `kinds`.
absl::StatusOr<std::shared_ptr<Store>> BuildStoreAmong(Dsn& dsn, const StoreOptions& options,
                                                       const StoreKinds& kinds);
absl::StatusOr<Capabilities> CheckStoreAmong(Dsn& dsn, const StoreOptions& options,
                                             const StoreKinds& kinds);

// What `options` asks of the store (shared locks, a lease, permits) against
// the capabilities its DSN check found: InvalidArgument naming the DSN.
absl::Status CheckAskedFor(const Dsn& dsn, const Capabilities& caps,
                           const StoreOptions& options);

// A store of `kinds` prepared from `dsn` (core/store_entry.h): read once,
// nothing made yet.
absl::StatusOr<PreparedStore> PrepareStoreAmong(Dsn& dsn, const StoreOptions& options,
                                                const StoreKinds& kinds);

// StoreFromDsn() of a parsed DSN without degraded mode: the store prepared
// once, what `options` asks checked against its capabilities, then built,
// with `options.diagnostics` and the metrics mode set.
absl::StatusOr<std::shared_ptr<Store>> OpenPreparedStore(Dsn& dsn, const StoreOptions& options,
                                                         const StoreKinds& kinds);

// StoreFromDsn() among `kinds`: the DSN prepared once, then the store,
// with `options.diagnostics` and the metrics mode set as StoreFromDsn()
// sets them. Degraded mode (`fallback=`, `degraded=`) builds a second
// store of any kind, so it is refused here (InvalidArgument).
absl::StatusOr<std::shared_ptr<Store>> StoreFromDsnAmong(absl::string_view text,
                                                         const StoreOptions& options,
                                                         const StoreKinds& kinds);

}  // namespace ipclock

#endif  // IPCLOCK_REGISTRY_STORE_KINDS_H_
