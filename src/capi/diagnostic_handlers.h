// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// C handlers as diagnostic sinks: a `Diagnostic` (diagnostics.h) handed to
// a C function as a `struct ipclock_diagnostic` (c.h) whose strings live for
// the call.

#ifndef IPCLOCK_CAPI_DIAGNOSTIC_HANDLERS_H_
#define IPCLOCK_CAPI_DIAGNOSTIC_HANDLERS_H_

#include "capi/handles.h"
#include "ipclock/c.h"
#include "ipclock/diagnostics.h"

namespace ipclock {
namespace capi {

// A sink that calls `fn` with `arg`; empty for a null `fn`.
DiagnosticSink SinkFor(ipclock_diagnostic_fn fn, void* arg);

// Calls a watch's `on_lost` about `lock`.
void CallLostHandler(ipclock_lost_fn fn, void* arg, ipclock_lock* lock,
                     const Diagnostic& diagnostic);

}  // namespace capi
}  // namespace ipclock

#endif  // IPCLOCK_CAPI_DIAGNOSTIC_HANDLERS_H_
