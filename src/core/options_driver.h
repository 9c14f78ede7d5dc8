// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The driver function `prepare` (core/store_entry.h, StoreDriver) of a store
// whose DSN is read into one options struct, written once for every such
// store:
//
//   const StoreDriver kRedisDriver = {
//       &PrepareFromOptions<&RedisOptionsFromDsn, &CheckRedisOptions,
//                           &RedisCapabilities, &NewRedisStore>,
//       nullptr, &HiredisLibrary};
//
// `kRead` reads the options from the DSN: `(Dsn&)` or
// `(Dsn&, const StoreOptions&)`, returning StatusOr<Options>; whether it
// checks that it took every option or not, it is checked after it (a second
// check finds nothing new). `kCheck` checks them, making nothing:
// `(const Options&)` or `(const Options&, const Dsn&)` (for messages that
// name the DSN), returning a Status or a StatusOr of anything; or nullptr,
// where `kRead` checks all there is to check.
// `kCapabilities` gives the store's capabilities, from the options or from
// nothing. `kMake` builds the store from the options, which the prepared
// store keeps: the DSN is read once.

#ifndef IPCLOCK_CORE_OPTIONS_DRIVER_H_
#define IPCLOCK_CORE_OPTIONS_DRIVER_H_

#include <memory>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"

namespace ipclock {

namespace options_driver_internal {

template <auto kRead>
auto ReadOptions(Dsn& dsn, const StoreOptions& store_options) {
  if constexpr (std::is_invocable_v<decltype(kRead), Dsn&, const StoreOptions&>) {
    return kRead(dsn, store_options);
  } else {
    return kRead(dsn);
  }
}

inline absl::Status StatusOf(absl::Status status) { return status; }
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}

template <auto kCheck, typename Options>
absl::Status CheckRead(const Options& options, const Dsn& dsn) {
  if constexpr (std::is_null_pointer_v<decltype(kCheck)>) {
    return absl::OkStatus();
  } else if constexpr (std::is_invocable_v<decltype(kCheck), const Options&, const Dsn&>) {
    return StatusOf(kCheck(options, dsn));
  } else {
    return StatusOf(kCheck(options));
  }
}

}  // namespace options_driver_internal

// StoreDriver::prepare: the options `kRead` takes, checked by `kCheck`, the
// capabilities `kCapabilities` gives, and `kMake` to build from them.
template <auto kRead, auto kCheck, auto kCapabilities, auto kMake>
absl::StatusOr<PreparedStore> PrepareFromOptions(Dsn& dsn, const StoreOptions& store_options) {
  auto options = options_driver_internal::ReadOptions<kRead>(dsn, store_options);
  if (!options.ok()) return options.status();
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  if (absl::Status s = options_driver_internal::CheckRead<kCheck>(*options, dsn); !s.ok()) {
    return s;
  }
  PreparedStore prepared;
  if constexpr (std::is_invocable_v<decltype(kCapabilities), decltype(*options)>) {
    prepared.capabilities = kCapabilities(*options);
  } else {
    prepared.capabilities = kCapabilities();
  }
  prepared.build = [read = *std::move(options)]() mutable { return kMake(read); };
  return prepared;
}

// StoreDriver::prepare for a store that checks its DSN (`kCheck`, as
// `(Dsn&, const StoreOptions&)` returning StatusOr<Capabilities>) apart from
// building from it (`kBuild`, `(Dsn&, const StoreOptions&)`): the check reads
// a copy, and the build reads the DSN again. For a store whose DSN is not one
// options struct: the combined store, whose members are DSNs of their own.
template <auto kCheck, auto kBuild>
absl::StatusOr<PreparedStore> PrepareByCheckThenBuild(Dsn& dsn,
                                                      const StoreOptions& store_options) {
  Dsn checked = dsn;
  absl::StatusOr<Capabilities> caps = kCheck(checked, store_options);
  if (!caps.ok()) return caps.status();
  PreparedStore prepared;
  prepared.capabilities = *caps;
  prepared.build = [dsn = Dsn(dsn), store_options]() mutable {
    return kBuild(dsn, store_options);
  };
  return prepared;
}

}  // namespace ipclock

#endif  // IPCLOCK_CORE_OPTIONS_DRIVER_H_
