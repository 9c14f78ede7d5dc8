// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the C API's store open functions share (store_handle.cc).

#ifndef IPCLOCK_CAPI_STORE_HANDLE_H_
#define IPCLOCK_CAPI_STORE_HANDLE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/c.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"

namespace ipclock::capi {

// Reads `opts` (NULL: the defaults) into `options`: 0, or -EINVAL with the
// message in `*error` for an unknown remove_ipc policy.
int StoreOptionsFromC(const struct ipclock_store_options* opts, StoreOptions* options,
                      char** error, absl::string_view function);

// Makes the handle of `store`, or fails as every open function fails.
int FinishOpening(absl::StatusOr<std::shared_ptr<Store>> store, ipclock_store** out,
                  char** error);

}  // namespace ipclock::capi

#endif  // IPCLOCK_CAPI_STORE_HANDLE_H_
