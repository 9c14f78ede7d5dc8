// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ipclock: named locks between processes, from the shell. The CLI uses the
// library's public headers only (include/ipclock/).

#include <signal.h>
#include <stdio.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "doctor_command.h"
#include "exit_codes.h"
#include "help_text.h"
#include "ipclock/version.h"
#include "list_command.h"
#include "run_command.h"
#include "run_options.h"
#include "terminal_text.h"

int main(int argc, char** argv) {
  // Taken before any lock code runs: timed waits block a signal of their own,
  // and the command must start with the mask ipclock was given.
  sigset_t original_mask;
  sigprocmask(SIG_SETMASK, nullptr, &original_mask);
  ipclock_cli::InstallDiagnosticSink();

  if (argc < 2) {
    fputs(ipclock_cli::MainHelp().c_str(), stderr);
    return ipclock_cli::kExitUsage;
  }
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    fputs(ipclock_cli::MainHelp().c_str(), stdout);
    return 0;
  }
  if (command == "--version" || command == "-V") {
    printf("ipclock %s\n", IPCLOCK_VERSION_STRING);
    return 0;
  }
  if (command == "run") {
    absl::StatusOr<ipclock_cli::RunOptions> options =
        ipclock_cli::ParseRunOptions(argc - 1, argv + 1);
    if (!options.ok()) {
      ipclock_cli::PrintUsageError("run", options.status());
      return ipclock_cli::kExitUsage;
    }
    if (options->show_help) {
      fputs(ipclock_cli::RunHelp().c_str(), stdout);
      return 0;
    }
    return ipclock_cli::RunCommand(*options, original_mask);
  }
  if (command == "list") {
    absl::StatusOr<ipclock_cli::ListOptions> options =
        ipclock_cli::ParseListOptions(argc - 1, argv + 1);
    if (!options.ok()) {
      ipclock_cli::PrintUsageError("list", options.status());
      return ipclock_cli::kExitUsage;
    }
    if (options->show_help) {
      fputs(ipclock_cli::ListHelp().c_str(), stdout);
      return 0;
    }
    return ipclock_cli::ListCommand(*options);
  }
  if (command == "doctor") {
    absl::StatusOr<ipclock_cli::DoctorOptions> options =
        ipclock_cli::ParseDoctorOptions(argc - 1, argv + 1);
    if (!options.ok()) {
      ipclock_cli::PrintUsageError("doctor", options.status());
      return ipclock_cli::kExitUsage;
    }
    if (options->show_help) {
      fputs(ipclock_cli::DoctorHelp().c_str(), stdout);
      return 0;
    }
    return ipclock_cli::DoctorCommand(*options);
  }
  fprintf(stderr, "ipclock: unknown command '%s'\nTry 'ipclock --help'.\n",
          ipclock_cli::Printable(command).c_str());
  return ipclock_cli::kExitUsage;
}
