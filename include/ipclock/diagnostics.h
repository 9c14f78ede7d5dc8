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
//
// Under systemd. `WriteDiagnosticToStderr` (the first default) knows when
// stderr is the journal (systemd's $JOURNAL_STREAM names stderr's device
// and inode): it then sends each diagnostic to journald as an entry of its
// own, with PRIORITY= and fields a query can select on,
//
//   IPCLOCK_EVENT=lost        (kLockLost, kLeaseOverrun; also waiting,
//                             acquired, owner-died from programs that
//                             report their own acquisitions, as ipclock run)
//   IPCLOCK_STORE=, IPCLOCK_RESOURCE=, IPCLOCK_FENCE=   where known
//
// so that `journalctl IPCLOCK_EVENT=lost` finds every loss; where journald's
// socket cannot be reached ($IPCLOCK_JOURNAL_SOCKET names another than
// /run/systemd/journal/socket), the line goes to stderr with its syslog
// priority in front ("<3>", "<4>", "<6>"), which journald takes as the
// entry's priority. Elsewhere (a terminal, a file, a pipe) the line is
// written as it is.

#ifndef IPCLOCK_DIAGNOSTICS_H_
#define IPCLOCK_DIAGNOSTICS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ipclock {

enum class DiagnosticSeverity {
  kInfo,     // worth knowing; nothing is wrong with any lock
  kWarning,  // a lock is at risk, or was lost
  // Something failed. The library reports its failures as statuses, never
  // here; programs that route their own errors through a sink use it.
  kError,
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
  // What happened to one lock, for programs that report their own
  // acquisitions through a sink (ipclock run does, to the journal); the
  // library never emits these.
  kWaiting,    // it is held by another: waiting for it
  kAcquired,   // it was acquired
  kOwnerDied,  // it was acquired from a holder that died holding it
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
  // The lock's fencing token, where known (programs' own reports).
  std::optional<uint64_t> fence;
};

// The IPCLOCK_EVENT= value of `kind` in the journal: "lost" (kLockLost and
// kLeaseOverrun), "waiting", "acquired", "owner-died"; empty for kNotice.
absl::string_view DiagnosticEventName(DiagnosticKind kind);

// The syslog priority the journal gets for `diagnostic`: 3 (err) for a
// lost lock and for kError, 4 (warning) for kWarning, 6 (info) for kInfo.
int DiagnosticPriority(const Diagnostic& diagnostic);

using DiagnosticSink = std::function<void(const Diagnostic&)>;

// Sets the process default sink and returns the previous one. An empty sink
// says nothing.
DiagnosticSink SetDefaultDiagnosticSink(DiagnosticSink sink);

// The first process default: the text and a newline on stderr, in one
// write; to the journal as said above when stderr is the journal's.
void WriteDiagnosticToStderr(const Diagnostic& diagnostic);

// Whether stderr is the systemd journal's stream ($JOURNAL_STREAM names
// stderr's device and inode), as WriteDiagnosticToStderr sees it: decided
// once per process.
bool StderrIsJournal();

}  // namespace ipclock

#endif  // IPCLOCK_DIAGNOSTICS_H_
