// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: diagnostics.h
// -----------------------------------------------------------------------------
//
// Part of the API for programs (ipclock/ipclock.h includes it).
//
// Where ipclock's diagnostics go. A library should not decide where a
// program's messages go, yet some things must not pass in silence: a lock
// dir that systemd may delete at logout, keys named without a secret, a
// lease that ran out while held, a lock lost while held, a fallback store in
// use, async waits falling back to threads. Each is one `Diagnostic`, handed
// to one `DiagnosticSink`, chosen in this order:
//
//   1. per watch: `WatchOptions::diagnostics` (lock_watch.h), for the losses
//      that watch finds;
//   2. per store: `StoreOptions::diagnostics` (store_factory.h), for what
//      `StoreFromDsn()` reports while it builds the store and for what the
//      store and its locks report afterwards (lease overruns, losses found by
//      a watch without a sink of its own, fallback acquisitions);
//      `Store::SetDiagnosticSink()` sets or changes it on any store;
//   3. the process default, `SetDefaultDiagnosticSink()`, for everything
//      else. It starts as `WriteDiagnosticToStderr`, because a silent
//      default would hide exactly what these diagnostics exist to show.
//
// An empty sink at 1 or 2 means "the next one down"; to say nothing, set a
// sink that does nothing, or an empty process default.
//
// Example (a daemon that logs to the journal):
//
//   void LogToJournal() {
//     ipclock::SetDefaultDiagnosticSink([](const ipclock::Diagnostic& d) {
//       sd_journal_print(d.severity == ipclock::DiagnosticSeverity::kWarning
//                            ? LOG_WARNING : LOG_INFO,
//                        "%s", d.text.c_str());
//     });
//   }
//
// A sink may be called from any thread, including a watch's thread
// (lock_watch.h), and from several at once; it runs with no ipclock lock or
// mutex held, except as `WatchOptions::diagnostics` says for losses.

#ifndef IPCLOCK_DIAGNOSTICS_H_
#define IPCLOCK_DIAGNOSTICS_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ipclock {

enum class DiagnosticSeverity {
  kInfo,     // worth knowing; nothing is wrong with any lock
  kWarning,  // a lock is at risk, or was lost
};

enum class DiagnosticKind {
  // About the process or a store rather than one lock: a RemoveIPC or tmp
  // cleaner risk, keys named without a secret, a fallback store in use,
  // async waits on helper threads.
  kNotice,
  // A lock was released after its lease had run out: another holder may
  // have had it meanwhile. Told once per lock, also when the release
  // happens in the Lock's destructor, where the status is dropped.
  // `Lock::Release()` returns `status` all the same.
  kLeaseOverrun,
  // A watch (lock_watch.h) found a held lock lost. Told once per lock.
  kLockLost,
};

struct Diagnostic {
  DiagnosticKind kind = DiagnosticKind::kNotice;
  DiagnosticSeverity severity = DiagnosticSeverity::kWarning;
  // The whole diagnostic, one line without the newline, starting with
  // "ipclock: ".
  std::string text;

  // For kLeaseOverrun and kLockLost: the lock's store (`Store::Describe()`)
  // and its resource, as given (any bytes).
  std::string store;
  std::string resource;
  // For kLeaseOverrun and kLockLost: Aborted, saying what happened (e.g.
  // "lock file ... was deleted", "the lease ran out 1.234s before release").
  absl::Status status;
  // For kLeaseOverrun: the lease (`LockOptions::ttl`, or what a `Refresh()`
  // set), and how long before the release it ran out.
  absl::Duration ttl;
  absl::Duration overrun;
};

using DiagnosticSink = std::function<void(const Diagnostic&)>;

// Sets the process default sink and returns the previous one. An empty sink
// says nothing.
DiagnosticSink SetDefaultDiagnosticSink(DiagnosticSink sink);

// The first process default: the text and a newline on stderr, in one
// write.
void WriteDiagnosticToStderr(const Diagnostic& diagnostic);

}  // namespace ipclock

#endif  // IPCLOCK_DIAGNOSTICS_H_
