// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// torture: kills lock holders and waiters at random while workers check
// that the lock still excludes, loses no update and hands over after a
// death. See config.cc for the usage and worker.cc for the invariants.

#include <stdio.h>

#include <string>

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
  printf("torture: storm of ipclock run on %s, %d runs, %.1f s, a kill after 0-%d ms\n",
         r.store.c_str(), c.procs, r.seconds, c.kill_every_ms);
  printf("sections     %llu\n", static_cast<unsigned long long>(r.iterations));
  printf("kills        %llu (command inside the lock %llu, elsewhere %llu)\n",
         static_cast<unsigned long long>(r.kills),
         static_cast<unsigned long long>(r.holder_kills),
         static_cast<unsigned long long>(r.waiter_kills));
  printf("deaths found %llu inside the lock, told %llu, not told %llu\n",
         static_cast<unsigned long long>(r.takeovers),
         static_cast<unsigned long long>(r.deaths_told),
         static_cast<unsigned long long>(r.takeovers - r.deaths_told));
  printf("told of a death before its command started   %llu\n",
         static_cast<unsigned long long>(r.deaths_told_unseen));
  printf("violations   %llu\n", static_cast<unsigned long long>(r.violations));
  printf("errors       %llu\n", static_cast<unsigned long long>(r.errors));
  for (const std::string& m : r.messages) printf("  %s\n", m.c_str());
}

void PrintText(const Config& c, const Result& r) {
  if (r.storm) {
    PrintStormText(c, r);
    return;
  }
  printf("torture: %s, %d procs, %.1f s, a kill every %d ms\n", r.store.c_str(),
         c.procs, r.seconds, c.kill_every_ms);
  printf("iterations   %llu\n", static_cast<unsigned long long>(r.iterations));
  printf("kills        %llu (holders %llu, waiters %llu)\n",
         static_cast<unsigned long long>(r.kills),
         static_cast<unsigned long long>(r.holder_kills),
         static_cast<unsigned long long>(r.waiter_kills));
  printf("takeovers    %llu after a dead holder (%llu with a step half done)\n",
         static_cast<unsigned long long>(r.takeovers),
         static_cast<unsigned long long>(r.half_steps));
  printf("violations   %llu\n", static_cast<unsigned long long>(r.violations));
  printf("errors       %llu\n", static_cast<unsigned long long>(r.errors));
  printf("worst wait   %.3f ms\n", r.worst_wait_ms);
  printf("worst handover after a holder's death   %.3f ms\n",
         r.worst_handover_after_death_ms);
  for (const std::string& m : r.messages) printf("  %s\n", m.c_str());
}

void PrintJson(const Config& c, const Result& r) {
  std::vector<std::string> messages;
  for (const std::string& m : r.messages) messages.push_back(Quote(m));
  printf("{\"store\": %s, \"procs\": %d, \"seconds\": %.3f, \"kill_every_ms\": %d, "
         "\"iterations\": %llu, \"kills\": %llu, \"holder_kills\": %llu, "
         "\"waiter_kills\": %llu, \"takeovers\": %llu, \"half_steps\": %llu, "
         "\"violations\": %llu, \"errors\": %llu, \"worst_wait_ms\": %.3f, "
         "\"worst_handover_after_death_ms\": %.3f, \"messages\": [%s]}\n",
         Quote(r.store).c_str(), c.procs, r.seconds, c.kill_every_ms,
         static_cast<unsigned long long>(r.iterations),
         static_cast<unsigned long long>(r.kills),
         static_cast<unsigned long long>(r.holder_kills),
         static_cast<unsigned long long>(r.waiter_kills),
         static_cast<unsigned long long>(r.takeovers),
         static_cast<unsigned long long>(r.half_steps),
         static_cast<unsigned long long>(r.violations),
         static_cast<unsigned long long>(r.errors), r.worst_wait_ms,
         r.worst_handover_after_death_ms, absl::StrJoin(messages, ", ").c_str());
}

void PrintStormJson(const Config& c, const Result& r) {
  std::vector<std::string> messages;
  for (const std::string& m : r.messages) messages.push_back(Quote(m));
  printf("{\"store\": %s, \"storm\": true, \"procs\": %d, \"seconds\": %.3f, "
         "\"kill_every_ms\": %d, \"sections\": %llu, \"kills\": %llu, "
         "\"kills_inside\": %llu, \"deaths\": %llu, \"deaths_told\": %llu, "
         "\"deaths_told_unseen\": %llu, \"violations\": %llu, \"errors\": %llu, "
         "\"messages\": [%s]}\n",
         Quote(r.store).c_str(), c.procs, r.seconds, c.kill_every_ms,
         static_cast<unsigned long long>(r.iterations),
         static_cast<unsigned long long>(r.kills),
         static_cast<unsigned long long>(r.holder_kills),
         static_cast<unsigned long long>(r.takeovers),
         static_cast<unsigned long long>(r.deaths_told),
         static_cast<unsigned long long>(r.deaths_told_unseen),
         static_cast<unsigned long long>(r.violations),
         static_cast<unsigned long long>(r.errors), absl::StrJoin(messages, ", ").c_str());
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
    if (result->storm) {
      PrintStormJson(*config, *result);
    } else {
      PrintJson(*config, *result);
    }
  } else {
    PrintText(*config, *result);
  }
  fflush(stdout);
  // Errors are store failures the workers did not expect: not a broken
  // lock, but not a passing run either.
  return result->violations == 0 && result->errors == 0 ? 0 : 1;
}
