// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "getopt_util.h"

#include <getopt.h>
#include <string.h>

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ipclock_cli {

void ResetGetopt() {
  opterr = 0;
  optind = 1;
}

std::string GetoptProblem(int opt, char** argv) {
  // getopt_long leaves a bad short option in optopt, a bad long one in
  // argv[optind-1].
  const char* word = argv[optind - 1];
  std::string shown = strncmp(word, "--", 2) == 0 || optopt == 0 || optopt >= 256
                          ? std::string(word)
                          : std::string("-") + static_cast<char>(optopt);
  return absl::StrCat(opt == ':' ? "option needs an argument: " : "unknown option: ",
                      shown);
}

absl::Status UsageError(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view option, const char* text,
                                            absl::Duration min) {
  double seconds = 0;
  if (!absl::SimpleAtod(text, &seconds) || !std::isfinite(seconds) ||
      absl::Seconds(seconds) < min) {
    return UsageError(absl::StrCat("invalid ", option, " '", text,
                                   "': expected seconds, e.g. 2 or 0.5",
                                   min > absl::ZeroDuration()
                                       ? absl::StrCat(", at least ", absl::FormatDuration(min))
                                       : ""));
  }
  return absl::Seconds(seconds);
}

absl::Status ParseOptionsOnly(
    int argc, char** argv, const char* short_options, const struct option* long_options,
    bool* show_help,
    const std::function<absl::Status(int opt, const char* arg)>& handle) {
  ResetGetopt();
  for (;;) {
    const int opt = getopt_long(argc, argv, short_options, long_options, nullptr);
    if (opt == -1) break;
    if (opt == 'h') {
      *show_help = true;
      return absl::OkStatus();
    }
    if (opt == ':' || opt == '?') return UsageError(GetoptProblem(opt, argv));
    if (absl::Status s = handle(opt, optarg); !s.ok()) return s;
  }
  if (optind < argc) {
    return UsageError(absl::StrCat("unexpected argument: ", argv[optind]));
  }
  return absl::OkStatus();
}

}  // namespace ipclock_cli
