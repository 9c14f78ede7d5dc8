// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: ipclock.h
// -----------------------------------------------------------------------------
//
// The C++ entry header: everything a program needs to take named locks.
// C programs include "ipclock/c.h" instead.

#ifndef IPCLOCK_IPCLOCK_H_
#define IPCLOCK_IPCLOCK_H_

#ifndef __cplusplus
#error "ipclock/ipclock.h is the C++ API; C programs include ipclock/c.h"
#endif

#include "ipclock/lock.h"           // IWYU pragma: export
#include "ipclock/lock_factory.h"   // IWYU pragma: export
#include "ipclock/lock_guard.h"     // IWYU pragma: export
#include "ipclock/lock_watch.h"     // IWYU pragma: export
#include "ipclock/diagnostics.h"    // IWYU pragma: export
#include "ipclock/store_factory.h"  // IWYU pragma: export

#endif  // IPCLOCK_IPCLOCK_H_
