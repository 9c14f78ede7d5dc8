// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ipclock_store_open(): a store of any kind this build has, by DSN. It
// links every store of the build (StoreFromDsn() can make each one);
// ipclock_store_open_kinds() links only the kinds a program names.

#include "capi/errors.h"
#include "capi/store_handle.h"
#include "ipclock/c.h"
#include "ipclock/store_factory.h"

extern "C" {

int ipclock_store_open(const char* dsn, const struct ipclock_store_options* opts,
                       ipclock_store** out, char** error) {
  if (int rc = ipclock::capi::StartMaking(out, error, dsn != nullptr, "ipclock_store_open");
      rc != 0) {
    return rc;
  }
  ipclock::StoreOptions options;
  if (int rc = ipclock::capi::StoreOptionsFromC(opts, &options, error, "ipclock_store_open");
      rc != 0) {
    return rc;
  }
  return ipclock::capi::FinishOpening(ipclock::StoreFromDsn(dsn, options), out, error);
}

}  // extern "C"
