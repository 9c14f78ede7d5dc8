// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the options of the two semaphore stores (SysV, semaphore_store.h;
// POSIX, posix_semaphore_store.h) share: `mode`, `keep_idle` and
// `remove_ipc`, read from a DSN and checked the same way for both, with
// the store's name in the messages.

#ifndef IPCLOCK_STORES_SEMAPHORE_OPTIONS_H_
#define IPCLOCK_STORES_SEMAPHORE_OPTIONS_H_

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/dsn.h"
#include "core/removeipc_guard.h"
#include "core/store_errors.h"
#include "ipclock/store_factory.h"

namespace ipclock {

// Takes the DSN options `mode`, `keep_idle` (0 to Options::kMaxKeepIdle)
// and `removeipc` into `options`, in that order.
template <typename Options>
absl::Status TakeCommonSemaphoreOptions(Dsn& dsn, const StoreOptions& store_options, Options* options) {
  if (absl::Status s = dsn.TakeModeInto("mode", &options->mode); !s.ok()) return s;
  if (absl::Status s = dsn.TakeIntInto("keep_idle", &options->keep_idle, 0,
                                       static_cast<long>(Options::kMaxKeepIdle));
      !s.ok()) {
    return s;
  }
  return TakeRemoveIpcPolicy(dsn, store_options.remove_ipc, &options->remove_ipc);
}

// InvalidArgument, named after `store`, for a `mode` with more than
// permission bits or a `keep_idle` over Options::kMaxKeepIdle.
template <typename Options>
absl::Status CheckCommonSemaphoreOptions(absl::string_view store, const Options& options) {
  if ((options.mode & ~0777u) != 0) {
    return ConfigurationError(
        absl::StrFormat("%s: mode %o is not a permission mode", store, options.mode));
  }
  if (options.keep_idle > Options::kMaxKeepIdle) {
    return ConfigurationError(absl::StrCat(store, ": keep_idle=", options.keep_idle,
                                           ": at most ", Options::kMaxKeepIdle));
  }
  return absl::OkStatus();
}

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SEMAPHORE_OPTIONS_H_
