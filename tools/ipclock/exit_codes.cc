// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "exit_codes.h"

#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ipclock/diagnostics.h"
#include "ipclock/errors.h"
#include "terminal_text.h"

namespace ipclock_cli {

namespace {

// A line of ours, in one write(2) so that lines from the watch's thread and
// the main thread do not interleave; `text` is escaped already.
void WriteLine(std::string text, ipclock::DiagnosticSeverity severity) {
  ipclock::Diagnostic d;
  d.severity = severity;
  d.text = std::move(text);
  ipclock::WriteDiagnosticToStderr(d);
}

}  // namespace

int ExitCodeForStatus(const absl::Status& status) {
  // By the fault classes of ipclock/errors.h, which the man page's EXIT
  // STATUS table follows.
  switch (ipclock::FaultClassOf(status)) {
    case ipclock::FaultClass::kConfiguration:
      return kExitUsage;
    case ipclock::FaultClass::kRefused:
      return kExitNoPermission;
    // A store left out of this build is as unavailable as a server that is
    // down, but waiting cannot change it: it is never retried.
    case ipclock::FaultClass::kNotBuilt:
    case ipclock::FaultClass::kTransient:
      return kExitUnavailable;
    // A lock lost while held is told by `ipclock run` itself (79); one lost
    // on the way to being held is an error like any other.
    case ipclock::FaultClass::kLost:
    case ipclock::FaultClass::kMisuse:
    case ipclock::FaultClass::kOther:
      break;
  }
  return kExitOsError;
}

void Say(absl::string_view text, ipclock::DiagnosticSeverity severity) {
  WriteLine(absl::StrCat("ipclock: ", Printable(text)), severity);
}

void SayInfo(absl::string_view text) { Say(text, ipclock::DiagnosticSeverity::kInfo); }

void Tell(ipclock::Diagnostic report) {
  report.text = absl::StrCat("ipclock: ", Printable(report.text));
  ipclock::WriteDiagnosticToStderr(report);
}

void PrintError(absl::string_view who, const absl::Status& status) {
  absl::string_view message = status.message();
  absl::ConsumePrefix(&message, "ipclock: ");
  WriteLine(absl::StrCat(who, ": ", Printable(message)), ipclock::DiagnosticSeverity::kError);
}

void PrintUsageError(absl::string_view command, const absl::Status& status) {
  PrintError(absl::StrCat("ipclock ", command), status);
  WriteLine(absl::StrCat("Try 'ipclock ", command, " --help'."),
            ipclock::DiagnosticSeverity::kError);
}

int FailCommand(absl::string_view command, const absl::Status& status) {
  if (absl::IsInvalidArgument(status)) {
    PrintUsageError(command, status);
  } else {
    PrintError(absl::StrCat("ipclock ", command), status);
  }
  return ExitCodeForStatus(status);
}

void InstallDiagnosticSink() {
  // The library's diagnostics keep their kind, store and resource, with
  // their text escaped.
  ipclock::SetDefaultDiagnosticSink([](const ipclock::Diagnostic& d) {
    ipclock::Diagnostic escaped = d;
    absl::string_view text = d.text;
    absl::ConsumePrefix(&text, "ipclock: ");
    escaped.text = std::string(text);
    Tell(std::move(escaped));
  });
}

}  // namespace ipclock_cli
