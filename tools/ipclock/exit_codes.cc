// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "exit_codes.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ipclock/diagnostics.h"
#include "terminal_text.h"

namespace ipclock_cli {

namespace {

// One write(2), so that lines from the watch's thread and the main thread
// do not interleave.
void WriteLine(const std::string& line) {
  absl::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = write(STDERR_FILENO, rest.data(), rest.size());
    if (n <= 0) return;  // stderr is gone: nothing better to do
    rest.remove_prefix(static_cast<size_t>(n));
  }
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

void Say(absl::string_view text) { WriteLine(absl::StrCat("ipclock: ", Printable(text), "\n")); }

void PrintError(absl::string_view who, const absl::Status& status) {
  absl::string_view message = status.message();
  absl::ConsumePrefix(&message, "ipclock: ");
  WriteLine(absl::StrCat(who, ": ", Printable(message), "\n"));
}

void PrintUsageError(absl::string_view command, const absl::Status& status) {
  PrintError(absl::StrCat("ipclock ", command), status);
  WriteLine(absl::StrCat("Try 'ipclock ", command, " --help'.\n"));
}

void InstallDiagnosticSink() {
  ipclock::SetDefaultDiagnosticSink([](const ipclock::Diagnostic& d) {
    absl::string_view text = d.text;
    absl::ConsumePrefix(&text, "ipclock: ");
    Say(text);
  });
}

}  // namespace ipclock_cli
