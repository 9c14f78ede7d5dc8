// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ipclock: named locks between processes, from the shell. The CLI uses the
// library's public headers only (include/ipclock/).

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "descriptors.h"
#include "doctor_command.h"
#include "exit_codes.h"
#include "help_text.h"
#include "ipclock/version.h"
#include "list_command.h"
#include "run_command.h"
#include "run_options.h"
#include "terminal_text.h"
#include "wait_signals.h"

namespace {

// A subcommand whose options were parsed into `options`: a usage error, its
// help (--help), or what `run` returns.
template <typename Options, typename Run>
int Subcommand(const char* name, const absl::StatusOr<Options>& options,
               std::string (*help)(), Run run) {
  if (!options.ok()) {
    ipclock_cli::PrintUsageError(name, options.status());
    return ipclock_cli::kExitUsage;
  }
  if (options->show_help) {
    fputs(help().c_str(), stdout);
    return 0;
  }
  return run(*options);
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything is opened (descriptors.h).
  ipclock_cli::FillClosedStdio();
  // What COMMAND may inherit: what ipclock was given, nothing of its own.
  std::vector<int> inherited;
  if (argc >= 2 && strcmp(argv[1], "run") == 0) inherited = ipclock_cli::OpenDescriptors();
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
    const int status =
        Subcommand("run", ipclock_cli::ParseRunOptions(argc - 1, argv + 1), ipclock_cli::RunHelp,
                   [&](const ipclock_cli::RunOptions& options) {
                     return ipclock_cli::RunCommand(options, original_mask, inherited);
                   });
    // A signal before COMMAND started, once the locks and the store are let
    // go (wait_signals.h): die by it, as its default action would have.
    if (const int sig = ipclock_cli::WaitSignalReceived(); sig != 0) {
      ipclock_cli::DieBySignal(sig);
    }
    return status;
  }
  if (command == "list") {
    return Subcommand("list", ipclock_cli::ParseListOptions(argc - 1, argv + 1),
                      ipclock_cli::ListHelp, ipclock_cli::ListCommand);
  }
  if (command == "doctor") {
    return Subcommand("doctor", ipclock_cli::ParseDoctorOptions(argc - 1, argv + 1),
                      ipclock_cli::DoctorHelp, ipclock_cli::DoctorCommand);
  }
  fprintf(stderr, "ipclock: unknown command '%s'\nTry 'ipclock --help'.\n",
          ipclock_cli::Printable(command).c_str());
  return ipclock_cli::kExitUsage;
}
