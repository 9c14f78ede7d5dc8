// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: key_options.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/lock.h includes it).
//
// What a lock's resource name may be. Names are byte strings: any bytes are
// allowed, including NUL and invalid UTF-8. A name must be non-empty and at
// most `KeyOptions::max_resource_bytes` long; anything else is
// InvalidArgument when the `Lock` is made. Stores map names to their own
// namespaces (file names, IPC keys, Redis keys) and say how in their headers.

#ifndef IPCLOCK_KEY_OPTIONS_H_
#define IPCLOCK_KEY_OPTIONS_H_

#include <cstddef>

namespace ipclock {

struct KeyOptions {
  // The longest resource name accepted, in bytes. Parse::Lock and most
  // servers cap names near 1 KiB; raise it only where every store in use can
  // take longer names.
  size_t max_resource_bytes = 1024;
};

}  // namespace ipclock

#endif  // IPCLOCK_KEY_OPTIONS_H_
