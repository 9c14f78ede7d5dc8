// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Handing diagnostics (ipclock/diagnostics.h) to the sink that should get
// them: a store's own, the one of the StoreFromDsn() call building a store
// on this thread, or the process default.

#ifndef IPCLOCK_CORE_DIAGNOSTICS_H_
#define IPCLOCK_CORE_DIAGNOSTICS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/diagnostics.h"
#include "ipclock/store.h"

namespace ipclock {

// Hands `diagnostic` to `store`'s sink if `store` is given and has one, else
// to the sink of the store being built on this thread (BuildSinkScope), else
// to the process default.
void EmitDiagnostic(const Store* store, const Diagnostic& diagnostic);

// A kNotice whose `text` starts with "ipclock: ", about `store` if given.
void EmitNotice(DiagnosticSeverity severity, absl::string_view text,
                const Store* store = nullptr);

// Tells `store`'s sink about a lock released `overrun` after its lease
// (`ttl`) ran out, and returns the Aborted status Lock::Release() gives for
// it.
absl::Status ReportLeaseOverrun(const Store& store, absl::string_view resource,
                                absl::Duration ttl, absl::Duration overrun);

// While one lives, diagnostics on this thread that have no store with a
// sink of its own go to `sink` when it is set: StoreFromDsn() makes one
// around building a store, so that what the store's factory reports (a
// RemoveIPC risk, keys without a secret) reaches StoreOptions::diagnostics.
// Scopes nest; the innermost one with a sink wins.
class BuildSinkScope {
 public:
  explicit BuildSinkScope(const DiagnosticSink& sink);
  BuildSinkScope(const BuildSinkScope&) = delete;
  BuildSinkScope& operator=(const BuildSinkScope&) = delete;
  ~BuildSinkScope();

 private:
  const DiagnosticSink* previous_;
};

}  // namespace ipclock

#endif  // IPCLOCK_CORE_DIAGNOSTICS_H_
