// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// torture: kills lock holders and waiters at random while workers check
// that the lock still excludes, loses no update and hands over after a
// death. See config.cc for the usage and worker.cc for the invariants.

#include <stdio.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "torture/config.h"
#include "torture/scratch.h"
#include "torture/storm.h"
#include "torture/supervisor.h"

namespace {

using ipclock_torture::Config;
using ipclock_torture::Result;

// A JSON string literal: the store description and messages may hold
// quotes or backslashes (a lock dir can be named anything).
std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

void PrintStormText(const Config& c, const Result& r) {
  absl::PrintF("torture: storm of ipclock run on %s, %d runs, %.1f s, a kill after 0-%d ms\n",
               r.store, c.procs, r.seconds, c.kill_every_ms);
  absl::PrintF("sections     %d\n", r.iterations);
  absl::PrintF("kills        %d (command inside the lock %d, elsewhere %d)\n", r.kills,
               r.holder_kills, r.waiter_kills);
  absl::PrintF("deaths found %d inside the lock, told %d, not told %d\n", r.takeovers,
               r.deaths_told, r.takeovers - r.deaths_told);
  absl::PrintF("told of a death before its command started   %d\n", r.deaths_told_unseen);
  absl::PrintF("violations   %d\n", r.violations);
  absl::PrintF("errors       %d\n", r.errors);
  for (const std::string& m : r.messages) absl::PrintF("  %s\n", m);
}

void PrintText(const Config& c, const Result& r) {
  if (r.storm) {
    PrintStormText(c, r);
    return;
  }
  absl::PrintF("torture: %s, %d procs, %.1f s, a kill every %d ms\n", r.store, c.procs,
               r.seconds, c.kill_every_ms);
  absl::PrintF("iterations   %d\n", r.iterations);
  absl::PrintF("kills        %d (holders %d, waiters %d)\n", r.kills, r.holder_kills,
               r.waiter_kills);
  absl::PrintF("takeovers    %d after a dead holder (%d with a step half done)\n", r.takeovers,
               r.half_steps);
  absl::PrintF("violations   %d\n", r.violations);
  absl::PrintF("errors       %d\n", r.errors);
  absl::PrintF("worst wait   %.3f ms\n", r.worst_wait_ms);
  absl::PrintF("worst handover after a holder's death   %.3f ms\n",
               r.worst_handover_after_death_ms);
  for (const std::string& m : r.messages) absl::PrintF("  %s\n", m);
}

// The counts of a JSON report, in the order written: a torture run names
// each by its `run` name, a CLI storm by its `storm` name (the same fields
// count other things there, see Result); nullptr leaves it out.
struct JsonCount {
  const char* run;
  const char* storm;
  uint64_t Result::*value;
};
constexpr JsonCount kJsonCounts[] = {
    {"iterations", "sections", &Result::iterations},
    {"kills", "kills", &Result::kills},
    {"holder_kills", "kills_inside", &Result::holder_kills},
    {"waiter_kills", nullptr, &Result::waiter_kills},
    {"takeovers", "deaths", &Result::takeovers},
    {"half_steps", nullptr, &Result::half_steps},
    {nullptr, "deaths_told", &Result::deaths_told},
    {nullptr, "deaths_told_unseen", &Result::deaths_told_unseen},
    {"violations", "violations", &Result::violations},
    {"errors", "errors", &Result::errors},
};

void PrintJson(const Config& c, const Result& r) {
  std::string out = absl::StrFormat("{\"store\": %s, %s\"procs\": %d, \"seconds\": %.3f, "
                                    "\"kill_every_ms\": %d",
                                    Quote(r.store), r.storm ? "\"storm\": true, " : "", c.procs,
                                    r.seconds, c.kill_every_ms);
  for (const JsonCount& count : kJsonCounts) {
    const char* name = r.storm ? count.storm : count.run;
    if (name != nullptr) absl::StrAppend(&out, ", \"", name, "\": ", r.*count.value);
  }
  if (!r.storm) {
    absl::StrAppendFormat(&out, ", \"worst_wait_ms\": %.3f, \"worst_handover_after_death_ms\": %.3f",
                          r.worst_wait_ms, r.worst_handover_after_death_ms);
  }
  std::vector<std::string> messages;
  for (const std::string& m : r.messages) messages.push_back(Quote(m));
  printf("%s, \"messages\": [%s]}\n", out.c_str(), absl::StrJoin(messages, ", ").c_str());
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<Config> config = ipclock_torture::ParseArgs(argc - 1, argv + 1);
  if (!config.ok()) {
    if (!config.status().message().empty()) {
      fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    }
    fputs(ipclock_torture::kUsage, stderr);
    return 2;
  }
  ipclock_torture::Scratch scratch;
  absl::StatusOr<std::string> dsn = scratch.Expand(config->dsn);
  if (!dsn.ok()) {
    fprintf(stderr, "%s\n", dsn.status().ToString().c_str());
    return 2;
  }
  absl::StatusOr<Result> result = config->cli.empty()
                                      ? ipclock_torture::RunTorture(*config, *dsn)
                                      : ipclock_torture::RunStorm(*config, *dsn);
  if (!result.ok()) {
    fprintf(stderr, "torture: %s\n", result.status().ToString().c_str());
    return 2;
  }
  if (config->json) {
    PrintJson(*config, *result);
  } else {
    PrintText(*config, *result);
  }
  fflush(stdout);
  // Errors are store failures the workers did not expect: not a broken
  // lock, but not a passing run either.
  return result->violations == 0 && result->errors == 0 ? 0 : 1;
}
