// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: ipclock.h
// -----------------------------------------------------------------------------
//
// The C++ entry header: everything a program needs to take named locks.
// C programs include "ipclock/c.h" instead.
//
// The headers for programs are those directly in include/ipclock/: this one
// and what it includes (lock.h, key_options.h, lock_factory.h, lock_guard.h,
// lock_watch.h, store.h, store_factory.h, remove_ipc.h, diagnostics.h,
// metrics.h, errors.h, version.h), async.h for event loops, and c.h. None of
// them includes anything of the subdirs. Three subdirs serve others:
//   ipclock/stores/  one store's typed factory and options each, for building
//                    a store in code rather than from a DSN; each header is
//                    also that store's reference;
//   ipclock/admin/   listing held locks and checking a host, as the
//                    `ipclock` CLI does (inspect.h, host_check.h);
//   ipclock/spi/     what a new store implements (store_interface.h,
//                    key.h, key_state.h, deadline.h).

#ifndef IPCLOCK_IPCLOCK_H_
#define IPCLOCK_IPCLOCK_H_

#ifndef __cplusplus
#error "ipclock/ipclock.h is the C++ API; C programs include ipclock/c.h"
#endif

#include "ipclock/diagnostics.h"    // IWYU pragma: export
#include "ipclock/errors.h"         // IWYU pragma: export
#include "ipclock/lock.h"           // IWYU pragma: export
#include "ipclock/lock_factory.h"   // IWYU pragma: export
#include "ipclock/lock_guard.h"     // IWYU pragma: export
#include "ipclock/lock_watch.h"     // IWYU pragma: export
#include "ipclock/metrics.h"        // IWYU pragma: export
#include "ipclock/remove_ipc.h"     // IWYU pragma: export
#include "ipclock/store.h"          // IWYU pragma: export
#include "ipclock/store_factory.h"  // IWYU pragma: export
#include "ipclock/version.h"        // IWYU pragma: export

#endif  // IPCLOCK_IPCLOCK_H_
