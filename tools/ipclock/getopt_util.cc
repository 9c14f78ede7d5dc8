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

namespace {

// SECS as written: decimal digits with an optional fraction ("2", "0.5",
// ".5", "2."). strtod's other forms are refused, not guessed at: "0x10" is
// 16 to strtod, "1e9" a number few would type for a duration, "inf" and
// "nan" no duration at all.
bool IsDecimalSeconds(absl::string_view text) {
  size_t digits = 0;
  bool point = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      return false;
    }
  }
  return digits > 0;
}

}  // namespace

absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view option, const char* text,
                                            absl::Duration min) {
  double seconds = 0;
  const bool number = IsDecimalSeconds(text) && absl::SimpleAtod(text, &seconds) &&
                      std::isfinite(seconds);
  if (!number || absl::Seconds(seconds) < min) {
    return UsageError(absl::StrCat("invalid ", option, " '", text,
                                   "': expected seconds in decimal, e.g. 2 or 0.5",
                                   min > absl::ZeroDuration()
                                       ? absl::StrCat(", at least ", absl::FormatDuration(min))
                                       : ""));
  }
  if (absl::Seconds(seconds) > kMaxSeconds) {
    return UsageError(absl::StrCat("invalid ", option, " '", text, "': at most ",
                                   absl::ToInt64Seconds(kMaxSeconds), " seconds (",
                                   absl::ToInt64Hours(kMaxSeconds) / 24, " days)"));
  }
  return absl::Seconds(seconds);
}

LongOption StringOption(const char* name, std::string* out) {
  return {name, true, [out](const char* arg) {
            *out = arg;
            return absl::OkStatus();
          }};
}

LongOption FlagOption(const char* name, bool* out) {
  return {name, false, [out](const char*) {
            *out = true;
            return absl::OkStatus();
          }};
}

absl::Status ParseOptionsOnly(int argc, char** argv, const std::vector<LongOption>& options,
                              bool* show_help) {
  // Long-only options: values outside the char range, 256 + their index.
  constexpr int kFirst = 256;
  std::vector<struct option> table;
  for (const LongOption& o : options) {
    table.push_back({o.name, o.takes_argument ? required_argument : no_argument, nullptr,
                     kFirst + static_cast<int>(table.size())});
  }
  table.push_back({"help", no_argument, nullptr, 'h'});
  table.push_back({nullptr, 0, nullptr, 0});
  ResetGetopt();
  for (;;) {
    const int opt = getopt_long(argc, argv, ":h", table.data(), nullptr);
    if (opt == -1) break;
    if (opt == 'h') {
      *show_help = true;
      return absl::OkStatus();
    }
    if (opt == ':' || opt == '?') return UsageError(GetoptProblem(opt, argv));
    const LongOption& o = options[opt - kFirst];
    if (absl::Status s = o.handle(o.takes_argument ? optarg : nullptr); !s.ok()) return s;
  }
  if (optind < argc) {
    return UsageError(absl::StrCat("unexpected argument: ", argv[optind]));
  }
  return absl::OkStatus();
}

}  // namespace ipclock_cli
