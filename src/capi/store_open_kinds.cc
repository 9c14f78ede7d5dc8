// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ipclock_store_open_kinds(): a store by DSN among the kinds the program
// names (registry/store_kinds.h), which are all it links.

#include <errno.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capi/errors.h"
#include "capi/store_handle.h"
#include "capi/store_kind.h"
#include "ipclock/c.h"
#include "registry/store_kinds.h"

extern "C" {

int ipclock_store_open_kinds(const char* dsn, const struct ipclock_store_kind* const* kinds,
                             size_t nkinds, const struct ipclock_store_options* opts,
                             ipclock_store** out, char** error) {
  constexpr const char* kFunction = "ipclock_store_open_kinds";
  if (int rc = ipclock::capi::StartMaking(out, error, dsn != nullptr && kinds != nullptr,
                                          kFunction);
      rc != 0) {
    return rc;
  }
  std::vector<const ipclock::StoreEntry*> entries;
  entries.reserve(nkinds);
  for (size_t i = 0; i < nkinds; ++i) {
    if (kinds[i] == nullptr || kinds[i]->entry == nullptr) {
      return ipclock::capi::FailMaking(
          error, -EINVAL, absl::StrCat("ipclock: ", kFunction, ": kinds[", i, "] is NULL"));
    }
    entries.push_back(kinds[i]->entry);
  }
  ipclock::StoreOptions options;
  if (int rc = ipclock::capi::StoreOptionsFromC(opts, &options, error, kFunction); rc != 0) {
    return rc;
  }
  const ipclock::StoreKinds among{entries, "this program opens"};
  return ipclock::capi::FinishOpening(ipclock::StoreFromDsnAmong(dsn, options, among), out,
                                      error);
}

}  // extern "C"
