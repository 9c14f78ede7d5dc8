// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Degraded mode: a DSN of a remote store may name a local store to use when
// the remote one cannot be built, and what to say about it:
//
//   redis://db:6379?fallback=flock%3A%2F%2F%2Frun%2Flock%2Fapp&degraded=warn
//
//   degraded=raise           the remote store's error, as without a fallback
//                            (the default: degraded mode is off unless asked
//                            for)
//   degraded=warn            a line on stderr at every acquisition
//   degraded=warn_throttled  the same, at most once a minute per store
//   degraded=proceed         nothing
//
// Only Unavailable (server down) and Unimplemented (store compiled out) at
// creation switch to the fallback; any other error (a bad DSN, a refused
// password) is returned as it is, since a fallback would hide a mistake that
// will not go away. The choice is made once, when the store is built: the
// store returned is the fallback, wrapped so that its Describe() says so, and
// it never goes back to the remote server. Locks taken through it therefore
// never mix the two stores, and every lock of one store object lives in one
// place. A program that wants the remote store back builds its store again.
//
// The fallback excludes only what its own scope covers: processes on this
// host, not other hosts that still use the remote server. doc/stores.md ("Degraded mode") says so
// under "Degraded mode".

#ifndef IPCLOCK_REGISTRY_DEGRADED_STORE_H_
#define IPCLOCK_REGISTRY_DEGRADED_STORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dsn.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"

namespace ipclock {

// Whether `dsn` asks for degraded mode (has `fallback=` or `degraded=`).
// Inline, so that a store built without the registry (store_kinds.h) can
// refuse degraded mode without linking it.
inline bool WantsDegradedMode(const Dsn& dsn) {
  return dsn.PeekOption("fallback").has_value() || dsn.PeekOption("degraded").has_value();
}

// Takes `fallback` and `degraded` from `dsn`, builds the store that the rest
// of it names, and falls back as described above; the fallback's DSN (the
// option's value) is parsed once, and each store is built from its own
// parsed DSN. InvalidArgument for `degraded=` without `fallback=`, an
// unknown policy, a fallback that is itself remote or has a fallback.
absl::StatusOr<std::shared_ptr<Store>> DegradedStoreFromDsn(
    Dsn& dsn, const StoreOptions& options);

// The DSN checks (registry/store_registry.h) of both stores, the fallback's
// first. The capabilities are those both stores have: what a program can
// count on whichever one it gets.
absl::StatusOr<Capabilities> CheckDegradedDsn(Dsn& dsn, const StoreOptions& options);

}  // namespace ipclock

#endif  // IPCLOCK_REGISTRY_DEGRADED_STORE_H_
