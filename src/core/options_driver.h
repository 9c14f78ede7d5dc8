// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The driver functions (core/store_entry.h, StoreDriver) of a store whose DSN
// is read into one options struct, written once for every such store:
//
//   const StoreDriver kRedisDriver = {
//       &StoreFromOptions<&RedisOptionsFromDsn, &NewRedisStore>, nullptr,
//       &CheckOptions<&RedisOptionsFromDsn, &CheckRedisOptions, &RedisCapabilities>,
//       &HiredisLibrary};
//
// `kRead` reads the options from the DSN: `(Dsn&)` or
// `(Dsn&, const StoreOptions&)`, returning StatusOr<Options>. Whether it
// checks that it took every option or not, the functions here check it
// after it (a second check finds nothing new). `kMake` builds the store
// from the options; `kCheck` checks them, making nothing, and returns a
// Status or a StatusOr of anything; `kCapabilities` gives the store's
// capabilities, from the options or from nothing.

#ifndef IPCLOCK_CORE_OPTIONS_DRIVER_H_
#define IPCLOCK_CORE_OPTIONS_DRIVER_H_

#include <memory>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dsn.h"
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

}  // namespace options_driver_internal

// StoreDriver::from_dsn: the options `kRead` takes, then the store `kMake`
// builds from them.
template <auto kRead, auto kMake>
absl::StatusOr<std::shared_ptr<Store>> StoreFromOptions(Dsn& dsn,
                                                        const StoreOptions& store_options) {
  auto options = options_driver_internal::ReadOptions<kRead>(dsn, store_options);
  if (!options.ok()) return options.status();
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return kMake(*options);
}

// StoreDriver::check: the options `kRead` takes, checked by `kCheck`, then
// the capabilities `kCapabilities` gives.
template <auto kRead, auto kCheck, auto kCapabilities>
absl::StatusOr<Capabilities> CheckOptions(Dsn& dsn, const StoreOptions& store_options) {
  auto options = options_driver_internal::ReadOptions<kRead>(dsn, store_options);
  if (!options.ok()) return options.status();
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  if (absl::Status s = options_driver_internal::StatusOf(kCheck(*options)); !s.ok()) return s;
  if constexpr (std::is_invocable_v<decltype(kCapabilities), decltype(*options)>) {
    return kCapabilities(*options);
  } else {
    return kCapabilities();
  }
}

}  // namespace ipclock

#endif  // IPCLOCK_CORE_OPTIONS_DRIVER_H_
