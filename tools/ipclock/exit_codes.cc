// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "exit_codes.h"

#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ipclock/diagnostics.h"
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
  switch (status.code()) {
    case absl::StatusCode::kPermissionDenied:
      return kExitNoPermission;
    case absl::StatusCode::kUnavailable:
    // A store left out of this build is as unavailable as a server that is
    // down: the command line itself was fine.
    case absl::StatusCode::kUnimplemented:
      return kExitUnavailable;
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    default:
      return kExitOsError;
  }
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
