// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/diagnostics.h"

#include <stdio.h>
#include <unistd.h>

#include <errno.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "platform/errors.h"
#include "platform/files.h"
#include "platform/journal.h"

namespace ipclock {
namespace {

std::mutex& DefaultMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

// Never destroyed: a lock released by a static destructor at exit still
// finds a sink.
DiagnosticSink& DefaultSink() {
  static DiagnosticSink* sink = new DiagnosticSink(WriteDiagnosticToStderr);
  return *sink;
}

// The sink of the StoreFromDsn() call building a store on this thread.
thread_local const DiagnosticSink* t_build_sink = nullptr;

// "1234ms", "1.5ms", "250us": whole microseconds, enough to tell a lease
// missed by a hair from one forgotten for minutes.
std::string Shown(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Microseconds(1)));
}

}  // namespace

DiagnosticSink SetDefaultDiagnosticSink(DiagnosticSink sink) {
  std::lock_guard<std::mutex> guard(DefaultMutex());
  return std::exchange(DefaultSink(), std::move(sink));
}

absl::string_view DiagnosticEventName(DiagnosticKind kind) {
  switch (kind) {
    case DiagnosticKind::kLockLost:
    case DiagnosticKind::kLeaseOverrun:
      return "lost";
    case DiagnosticKind::kWaiting:
      return "waiting";
    case DiagnosticKind::kAcquired:
      return "acquired";
    case DiagnosticKind::kOwnerDied:
      return "owner-died";
    case DiagnosticKind::kNotice:
      break;
  }
  return "";
}

int DiagnosticPriority(const Diagnostic& diagnostic) {
  if (diagnostic.kind == DiagnosticKind::kLockLost) return 3;
  switch (diagnostic.severity) {
    case DiagnosticSeverity::kError:
      return 3;
    case DiagnosticSeverity::kWarning:
      return 4;
    case DiagnosticSeverity::kInfo:
      break;
  }
  return 6;
}

namespace {

// An entry of its own in the journal, with fields; false if journald could
// not be reached.
bool SendToJournal(const Diagnostic& d) {
  const std::string priority = absl::StrCat(DiagnosticPriority(d));
  const std::string fence = d.fence ? absl::StrCat(*d.fence) : std::string();
  const absl::string_view event = DiagnosticEventName(d.kind);
  // journalctl shows the identifier in front of the message: "ipclock[42]:
  // ipclock: lost ..." would say it twice. A library's message in another
  // program keeps its "ipclock: ", which says where it came from.
  const absl::string_view identifier = program_invocation_short_name;
  absl::string_view message = d.text;
  if (absl::ConsumePrefix(&message, identifier) && !absl::ConsumePrefix(&message, ": ")) {
    message = d.text;
  }
  std::vector<JournalField> fields = {
      {"MESSAGE", message},
      {"PRIORITY", priority},
      {"SYSLOG_IDENTIFIER", identifier},
  };
  if (!event.empty()) fields.emplace_back("IPCLOCK_EVENT", event);
  if (!d.store.empty()) fields.emplace_back("IPCLOCK_STORE", d.store);
  if (!d.resource.empty()) fields.emplace_back("IPCLOCK_RESOURCE", d.resource);
  if (d.fence) fields.emplace_back("IPCLOCK_FENCE", fence);
  return SendJournalEntry(fields);
}

}  // namespace

bool StderrIsJournal() { return StderrIsJournalStream(); }

void WriteDiagnosticToStderr(const Diagnostic& diagnostic) {
  std::string line;
  if (StderrIsJournalStream()) {
    if (SendToJournal(diagnostic)) return;
    line = absl::StrCat("<", DiagnosticPriority(diagnostic), ">");
  }
  // One write(2) of the whole line, so that threads and other processes
  // sharing the stream cannot split it; stdio's buffer is flushed first so
  // that the line lands after what the program already printed.
  absl::StrAppend(&line, diagnostic.text, "\n");
  fflush(stderr);
  // A closed stderr has nowhere to report to: the error is dropped.
  (void)WriteAllToStream(STDERR_FILENO, line.data(), line.size());
}

void EmitDiagnostic(const Store* store, const Diagnostic& diagnostic) {
  DiagnosticSink sink;
  if (store != nullptr) sink = store->diagnostic_sink();
  if (!sink && t_build_sink != nullptr) sink = *t_build_sink;
  if (!sink) {
    // A copy, called outside the mutex: a sink may take its time, or set
    // another sink.
    std::lock_guard<std::mutex> guard(DefaultMutex());
    sink = DefaultSink();
  }
  if (sink) sink(diagnostic);
}

void EmitNotice(DiagnosticSeverity severity, absl::string_view text, const Store* store) {
  Diagnostic d;
  d.kind = DiagnosticKind::kNotice;
  d.severity = severity;
  d.text = std::string(text);
  EmitDiagnostic(store, d);
}

absl::Status ReportLeaseOverrun(const Store& store, absl::string_view resource,
                                absl::Duration ttl, absl::Duration overrun) {
  const std::string describe = store.Describe();
  Diagnostic d;
  d.kind = DiagnosticKind::kLeaseOverrun;
  d.severity = DiagnosticSeverity::kWarning;
  d.store = describe;
  d.resource = std::string(resource);
  d.ttl = ttl;
  d.overrun = overrun;
  d.status = StoreError(absl::StatusCode::kAborted, describe, resource,
                        absl::StrCat("the lease ran out ", Shown(overrun),
                                     " before release; another holder may have "
                                     "had the lock meanwhile"));
  d.text = absl::StrCat("ipclock: warning: ", describe, ": resource ", QuoteResource(resource),
                        ": the lease ran out ", Shown(overrun),
                        " before release; another holder may have had the lock meanwhile");
  EmitDiagnostic(&store, d);
  return d.status;
}

BuildSinkScope::BuildSinkScope(const DiagnosticSink& sink) : previous_(t_build_sink) {
  if (sink) t_build_sink = &sink;
}

BuildSinkScope::~BuildSinkScope() { t_build_sink = previous_; }

}  // namespace ipclock
