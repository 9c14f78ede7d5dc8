// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "torture/config.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ipclock_torture {

const char kUsage[] =
    "usage: torture --store DSN [--procs N] [--seconds S | --iterations N]\n"
    "               [--min-kills K] [--kill-every-ms M] [--kill any|holders|waiters]\n"
    "               [--hold-us U]\n"
    "               [--ttl-ms T] [--wait-bound-ms B] [--resource NAME] [--json]\n"
    "               [--allow-process-scope]\n"
    "       torture --cli IPCLOCK --store DSN [--section PROGRAM] [options above]\n"
    "\n"
    "N worker processes acquire a lock on NAME, update a shared record under\n"
    "it and release, while a supervisor SIGKILLs a random holder or waiter\n"
    "every M ms and starts a new worker in its place. Exits 1 if two holders\n"
    "ever overlapped, an update was lost, or a waiter was starved for longer\n"
    "than B ms; 2 on a usage error or a store that cannot be tortured.\n"
    "In DSN, {tmpdir} becomes a fresh temp dir and {shm} a fresh segment\n"
    "name, both removed afterwards. --allow-process-scope runs on in-memory,\n"
    "whose locks exclude nothing between processes, to see torture fail.\n"
    "\n"
    "With --cli, a storm: N runs of `IPCLOCK run --store DSN --key NAME --\n"
    "PROGRAM` (torture-section, beside torture unless --section names it),\n"
    "each started again when it ends, whose command records its pid inside\n"
    "the lock for up to U us. After a pause of 0 to M ms, a random run (half\n"
    "the time the one whose command is inside) gets SIGSTOP, its command and\n"
    "the command's process group SIGKILL, then the run SIGKILL. Exits 1 if a\n"
    "command ever found the one before it dead inside the lock without\n"
    "IPCLOCK_PREVIOUS_OWNER_DIED=1, or alive.\n";

namespace {

absl::Status Bad(absl::string_view flag, absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("torture: bad value \"", value, "\" for ", flag));
}

template <typename T>
absl::Status ParseNumber(absl::string_view flag, absl::string_view text,
                         T min, T max, T* out) {
  T value;
  if (!absl::SimpleAtoi(text, &value) || value < min || value > max) {
    return Bad(flag, text);
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ParseNonEmpty(absl::string_view flag, absl::string_view text, std::string* out) {
  if (text.empty()) return Bad(flag, text);
  *out = std::string(text);
  return absl::OkStatus();
}

// The words --kill takes.
struct VictimsWord {
  absl::string_view word;
  Config::Victims victims;
};
constexpr VictimsWord kVictimsWords[] = {
    {"any", Config::Victims::kAny},
    {"holders", Config::Victims::kHolders},
    {"waiters", Config::Victims::kWaiters},
};

absl::Status ParseVictims(absl::string_view flag, absl::string_view text,
                          Config::Victims* out) {
  for (const VictimsWord& w : kVictimsWords) {
    if (text == w.word) {
      *out = w.victims;
      return absl::OkStatus();
    }
  }
  return Bad(flag, text);
}

}  // namespace

absl::StatusOr<Config> ParseArgs(int argc, char** argv) {
  Config c;
  for (int i = 0; i < argc; ++i) {
    const absl::string_view flag = argv[i];
    if (flag == "--json") {
      c.json = true;
      continue;
    }
    if (flag == "--allow-process-scope") {
      c.allow_process_scope = true;
      continue;
    }
    if (flag == "--help" || flag == "-h") {
      return absl::InvalidArgumentError("");
    }
    if (i + 1 >= argc) {
      return absl::InvalidArgumentError(absl::StrCat("torture: ", flag,
                                                     " needs a value"));
    }
    const absl::string_view value = argv[++i];
    absl::Status s;
    if (flag == "--store") {
      c.dsn = std::string(value);
    } else if (flag == "--cli") {
      s = ParseNonEmpty(flag, value, &c.cli);
    } else if (flag == "--section") {
      s = ParseNonEmpty(flag, value, &c.section);
    } else if (flag == "--resource") {
      s = ParseNonEmpty(flag, value, &c.resource);
    } else if (flag == "--procs") {
      s = ParseNumber<int>(flag, value, 1, 64, &c.procs);
    } else if (flag == "--seconds") {
      if (!absl::SimpleAtod(value, &c.seconds) || !(c.seconds > 0)) {
        return Bad(flag, value);
      }
    } else if (flag == "--iterations") {
      s = ParseNumber<uint64_t>(flag, value, 1, UINT64_MAX, &c.iterations);
    } else if (flag == "--min-kills") {
      s = ParseNumber<uint64_t>(flag, value, 0, UINT64_MAX, &c.min_kills);
    } else if (flag == "--kill-every-ms") {
      s = ParseNumber<int>(flag, value, 0, 3600 * 1000, &c.kill_every_ms);
    } else if (flag == "--kill") {
      s = ParseVictims(flag, value, &c.victims);
    } else if (flag == "--hold-us") {
      s = ParseNumber<int>(flag, value, 0, 1000 * 1000, &c.hold_us);
    } else if (flag == "--ttl-ms") {
      s = ParseNumber<int>(flag, value, 1, 3600 * 1000, &c.ttl_ms);
    } else if (flag == "--wait-bound-ms") {
      s = ParseNumber<int>(flag, value, 1, 3600 * 1000, &c.wait_bound_ms);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("torture: unknown flag ", flag));
    }
    if (!s.ok()) return s;
  }
  if (c.dsn.empty()) return absl::InvalidArgumentError("torture: --store is required");
  if (!c.section.empty() && c.cli.empty()) {
    return absl::InvalidArgumentError("torture: --section needs --cli");
  }
  if (c.seconds > 0 && c.iterations > 0) {
    return absl::InvalidArgumentError(
        "torture: give --seconds or --iterations, not both");
  }
  // A storm may run to a number of kills alone.
  if (c.seconds == 0 && c.iterations == 0 && (c.cli.empty() || c.min_kills == 0)) {
    c.seconds = 10;
  }
  if (c.min_kills > 0 && c.kill_every_ms == 0) {
    return absl::InvalidArgumentError("torture: --min-kills needs --kill-every-ms");
  }
  return c;
}

}  // namespace ipclock_torture
