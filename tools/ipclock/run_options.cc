// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "run_options.h"

#include <getopt.h>

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "getopt_util.h"

namespace ipclock_cli {

namespace {

// Long-only options get values outside the char range.
enum LongOnly : int {
  kOptKey = 256,
  kOptFile,
  kOptStore,
  kOptVerbose,
  kOptPermits,
  kOptLimit,
  kOptWeight,
  kOptTtl,
  kOptKillAfter,
  kOptCheckInterval,
  kOptNotifyReady,
  kOptNotifyWait,
};

// The short letters and their long names are flock(1)'s, so that a script
// can swap `flock -n -E 9 /path cmd` for `ipclock run -n -E 9 --file /path
// -- cmd`. The leading '+' stops at the first non-option: everything after
// it belongs to the command, even words that look like options; the ':'
// after it tells a missing argument from an unknown option.
constexpr char kShortOptions[] = "+:sxnw:E:oc:h";

const struct option kLongOptions[] = {
    {"key", required_argument, nullptr, kOptKey},
    {"file", required_argument, nullptr, kOptFile},
    {"store", required_argument, nullptr, kOptStore},
    {"shared", no_argument, nullptr, 's'},
    {"exclusive", no_argument, nullptr, 'x'},
    {"nonblock", no_argument, nullptr, 'n'},
    {"nb", no_argument, nullptr, 'n'},
    {"wait", required_argument, nullptr, 'w'},
    {"timeout", required_argument, nullptr, 'w'},
    {"conflict-exit-code", required_argument, nullptr, 'E'},
    {"close", no_argument, nullptr, 'o'},
    {"command", required_argument, nullptr, 'c'},
    {"verbose", no_argument, nullptr, kOptVerbose},
    {"permits", required_argument, nullptr, kOptPermits},
    {"limit", required_argument, nullptr, kOptLimit},
    {"weight", required_argument, nullptr, kOptWeight},
    {"ttl", required_argument, nullptr, kOptTtl},
    {"kill-after", required_argument, nullptr, kOptKillAfter},
    {"check-interval", required_argument, nullptr, kOptCheckInterval},
    {"notify-ready", no_argument, nullptr, kOptNotifyReady},
    {"notify-wait", no_argument, nullptr, kOptNotifyWait},
    {"help", no_argument, nullptr, 'h'},
    {nullptr, 0, nullptr, 0},
};

absl::Status Usage(absl::string_view message) { return UsageError(message); }

// Sets `*out` from an option's SECS, or says what is wrong with it.
absl::Status SetSeconds(absl::string_view option, const char* text, absl::Duration min,
                        absl::Duration* out) {
  absl::StatusOr<absl::Duration> d = ParseSeconds(option, text, min);
  if (!d.ok()) return d.status();
  *out = *d;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RunOptions> ParseRunOptions(int argc, char** argv) {
  RunOptions options;
  bool nonblock = false;
  std::optional<std::string> shell_command;
  std::vector<std::string> keys;
  bool have_file = false;
  bool have_weight = false;

  ResetGetopt();
  for (;;) {
    const int opt = getopt_long(argc, argv, kShortOptions, kLongOptions, nullptr);
    if (opt == -1) break;
    // What is wrong with an option's value, if anything.
    absl::Status problem;
    switch (opt) {
      case kOptKey:
        keys.emplace_back(optarg);
        break;
      case kOptFile:
        if (have_file) return Usage("--file may be given once");
        options.file = optarg;
        have_file = true;
        break;
      case kOptStore:
        options.store_dsn = optarg;
        break;
      case 's':
        options.mode = ipclock::LockMode::kShared;
        break;
      case 'x':
        options.mode = ipclock::LockMode::kExclusive;
        break;
      case 'n':
        nonblock = true;
        break;
      case 'w':
        problem = SetSeconds("wait", optarg, absl::ZeroDuration(), &options.wait);
        break;
      case kOptTtl:
        problem = SetSeconds("--ttl", optarg, absl::Milliseconds(1), &options.ttl);
        break;
      case kOptKillAfter:
        problem = SetSeconds("--kill-after", optarg, absl::ZeroDuration(), &options.kill_after);
        break;
      case kOptCheckInterval:
        problem =
            SetSeconds("--check-interval", optarg, absl::Milliseconds(1), &options.check_interval);
        break;
      case 'E':
        problem = SetWholeNumber("conflict exit code", optarg, 0, 255, "expected 0 to 255",
                                 &options.conflict_exit_code);
        break;
      case 'o':
        options.close_lock = true;
        break;
      case 'c':
        shell_command = optarg;
        break;
      case kOptVerbose:
        options.verbose = true;
        break;
      case kOptNotifyReady:
        options.notify_ready = true;
        break;
      case kOptNotifyWait:
        options.notify_wait = true;
        break;
      case kOptPermits:
        problem =
            SetWholeNumber("--permits", optarg, uint32_t{1}, std::numeric_limits<uint32_t>::max(),
                           "expected a whole number >= 1", &options.permits);
        break;
      case kOptLimit:
        // SEMVMX: the SysV store's kernel count holds no more.
        problem = SetWholeNumber("--limit", optarg, uint32_t{1}, uint32_t{32767},
                                 "expected a whole number from 1 to 32767", &options.limit);
        break;
      case kOptWeight:
        have_weight = true;
        problem = SetWholeNumber("--weight", optarg, uint32_t{1}, uint32_t{32767},
                                 "expected a whole number from 1 to 32767", &options.weight);
        break;
      case 'h':
        options.show_help = true;
        return options;
      case ':':
      case '?':
      default:
        return Usage(GetoptProblem(opt, argv));
    }
    if (!problem.ok()) return problem;
  }

  if (keys.empty() == !have_file) {
    return Usage(have_file ? "give --key or --file, not both"
                           : "nothing to lock: give --key NAME or --file PATH");
  }
  if (have_file && !options.store_dsn.empty()) {
    return Usage("--file locks that exact file; it takes no --store");
  }
  if (have_file && options.file.empty()) return Usage("--file needs a path");
  if (options.limit > 0) {
    if (have_file) return Usage("--limit counts slots of a --key, not a --file");
    if (options.permits > 1) return Usage("give --limit or --permits, not both");
    if (options.mode == ipclock::LockMode::kShared) return Usage("a --limit has no shared mode (-s)");
    if (options.weight > options.limit) {
      return Usage(absl::StrCat("--weight ", options.weight, " is more than --limit ",
                                options.limit));
    }
  } else if (have_weight) {
    return Usage("--weight takes permits of a --limit: give --limit N too");
  }
  for (const std::string& key : keys) {
    if (key.empty()) return Usage("--key needs a non-empty name");
  }
  // One global order: two runs naming the same keys in different orders
  // would otherwise each hold one and wait for the other forever.
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  options.keys = std::move(keys);

  if (nonblock) options.wait = absl::ZeroDuration();

  const bool have_args = optind < argc;
  if (shell_command.has_value()) {
    if (have_args) return Usage("give -c STRING or a command, not both");
    options.command = {"/bin/sh", "-c", *shell_command};
  } else {
    if (!have_args) return Usage("no command to run");
    options.command.assign(argv + optind, argv + argc);
  }
  return options;
}

}  // namespace ipclock_cli
