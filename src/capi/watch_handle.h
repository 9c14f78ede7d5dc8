// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the lock calls of the C API need of the watch's: a lock handle on a
// watch holds a WatchedLock instead of its Lock (handles.h), and leaves the
// watch when that WatchedLock is finished.

#ifndef IPCLOCK_CAPI_WATCH_HANDLE_H_
#define IPCLOCK_CAPI_WATCH_HANDLE_H_

#include "absl/status/status.h"
#include "capi/handles.h"

namespace ipclock {
namespace capi {

// Ends the watching of `lock` (on a watch) and gives its Lock back to the
// handle, as it was: held, unless the watch found it lost, whose loss is
// returned (the Lock still counts itself held then).
absl::Status TakeBack(ipclock_lock* lock);

// After `lock`'s WatchedLock was finished (released, taken back or
// destroyed, so that no report of it runs any more): takes the lock off its
// watch, acknowledges its loss if one was waiting, and returns the loss the
// watch found, if any.
absl::Status LeaveWatch(ipclock_lock* lock);

}  // namespace capi
}  // namespace ipclock

#endif  // IPCLOCK_CAPI_WATCH_HANDLE_H_
