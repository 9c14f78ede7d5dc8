// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What a C API store kind is (c_store_kinds.h, ipclock_store_open_kinds()):
// the entry of one store kind. Each `ipclock_kind_*` is defined alone in an
// object of its own (made from store_kind.cc.in), so that a static program
// links the stores it names and no other.

#ifndef IPCLOCK_CAPI_STORE_KIND_H_
#define IPCLOCK_CAPI_STORE_KIND_H_

#include "core/store_entry.h"
#include "ipclock/c.h"

struct ipclock_store_kind {
  const ipclock::StoreEntry* entry;
};

#endif  // IPCLOCK_CAPI_STORE_KIND_H_
