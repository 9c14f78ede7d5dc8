// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the subcommands' getopt_long loops share.

#ifndef IPCLOCK_TOOLS_IPCLOCK_GETOPT_UTIL_H_
#define IPCLOCK_TOOLS_IPCLOCK_GETOPT_UTIL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ipclock_cli {

// Readies getopt_long for a fresh parse that reports errors itself: our
// messages name the subcommand and point at its --help.
void ResetGetopt();

// What was wrong when getopt_long returned ':' (a missing argument; the
// option string must start with ':' or "+:") or '?' (an unknown option),
// e.g. "unknown option: --frob". Call right after that return.
std::string GetoptProblem(int opt, char** argv);

// The longest SECS any option takes. Beyond it a duration stops meaning
// anything to a lock (a lease "of without end", a check that never comes,
// so a lease never renewed), and the sums the watch makes of it would
// overflow.
inline constexpr absl::Duration kMaxSeconds = absl::Hours(24 * 366);

// SECS as a duration: decimal digits with an optional fraction (no sign,
// exponent or hex), at least `min` and at most kMaxSeconds.
// InvalidArgument naming `option` otherwise.
absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view option, const char* text,
                                            absl::Duration min);

// InvalidArgument with `message`: a usage error, which main() prints with
// a pointer to `ipclock COMMAND --help` (PrintUsageError).
absl::Status UsageError(absl::string_view message);

// Sets `*out` from an option's whole number, from `min` to `max`, or is
// the usage error "invalid WHAT 'TEXT': EXPECTED".
template <typename Number>
absl::Status SetWholeNumber(absl::string_view what, const char* text, Number min, Number max,
                            absl::string_view expected, Number* out) {
  Number n = 0;
  if (!absl::SimpleAtoi(text, &n) || n < min || n > max) {
    return UsageError(absl::StrCat("invalid ", what, " '", text, "': ", expected));
  }
  *out = n;
  return absl::OkStatus();
}

// A long option of a subcommand that takes no operands: its name, whether
// it takes an argument, and what to do with it (`arg` is nullptr for an
// option without one). An error it returns ends the parse.
struct LongOption {
  const char* name;
  bool takes_argument;
  std::function<absl::Status(const char* arg)> handle;
};

// A LongOption whose argument is stored in `*out`, as it is.
LongOption StringOption(const char* name, std::string* out);
// A LongOption without an argument that sets `*out`.
LongOption FlagOption(const char* name, bool* out);

// StringOption that refuses an empty argument: a usage error saying
// `if_empty` (e.g. "--key needs a non-empty name"). `out` points to a
// std::string or a std::optional<std::string>.
template <typename String>
LongOption NonEmptyOption(const char* name, String* out, const char* if_empty) {
  return {name, true, [out, if_empty](const char* arg) {
            if (arg[0] == '\0') return UsageError(if_empty);
            *out = arg;
            return absl::OkStatus();
          }};
}

// Parses the options of a subcommand that takes no operands: `options`,
// then -h/--help, which sets `*show_help` and stops. Returns the first error
// a handler gives. Unknown options, missing arguments and operands are
// usage errors; a long option may be abbreviated, as getopt_long allows.
absl::Status ParseOptionsOnly(int argc, char** argv, const std::vector<LongOption>& options,
                              bool* show_help);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_GETOPT_UTIL_H_
