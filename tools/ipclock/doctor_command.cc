// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "doctor_command.h"

#include <stdio.h>

#include <iterator>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exit_codes.h"
#include "getopt_util.h"
#include "ipclock/admin/host_check.h"
#include "json.h"
#include "terminal_text.h"

namespace ipclock_cli {

namespace {

using Level = ipclock::HostFinding::Level;

const char* LevelName(Level level) {
  static constexpr const char* kNames[] = {"ok", "info", "risk"};  // by Level
  static_assert(std::size(kNames) == static_cast<size_t>(Level::kRisk) + 1);
  return kNames[static_cast<size_t>(level)];
}

// Everything shown is escaped: a tree being audited may name its files and
// users anything.
void PrintHuman(const ipclock::HostReport& report) {
  printf("ipclock doctor: uid %u%s, %s, store %s\n", static_cast<unsigned>(report.uid),
         report.user_name.empty() ? ""
                                  : absl::StrCat(" (", Printable(report.user_name), ")").c_str(),
         report.host ? "this host"
                     : absl::StrCat("the tree at ", Printable(report.root)).c_str(),
         Printable(report.store).c_str());
  for (const ipclock::HostFinding& f : report.findings) {
    printf("[%s] %s%s: %s\n", LevelName(f.level), Printable(f.check).c_str(),
           f.subject.empty() ? "" : absl::StrCat(" ", Printable(f.subject)).c_str(),
           Printable(f.message).c_str());
    if (f.level != Level::kOk && !f.advice.empty()) {
      printf("       fix: %s\n", Printable(f.advice).c_str());
    }
  }
  if (report.risks == 0) {
    printf("Nothing found that breaks locks.\n");
  } else {
    printf("%d finding%s put%s locks at risk.\n", report.risks, report.risks == 1 ? "" : "s",
           report.risks == 1 ? "s" : "");
  }
}

void PrintJson(const ipclock::HostReport& report) {
  std::vector<std::string> items;
  for (const ipclock::HostFinding& f : report.findings) {
    items.push_back(JsonObject()
                        .AddString("check", f.check)
                        .AddString("level", LevelName(f.level))
                        .AddString("subject", f.subject)
                        .AddString("message", f.message)
                        .AddString("advice", f.advice)
                        .Build());
  }
  std::string list = JsonArray(items);
  list.pop_back();  // its final newline
  printf("%s\n", JsonObject()
                     .AddInt("uid", static_cast<int64_t>(report.uid))
                     .AddString("user", report.user_name)
                     .AddString("root", report.root)
                     .AddString("store", report.store)
                     .AddBool("at_risk", report.risks > 0)
                     .AddInt("risks", report.risks)
                     .AddRaw("findings", list)
                     .Build()
                     .c_str());
}

}  // namespace

absl::StatusOr<DoctorOptions> ParseDoctorOptions(int argc, char** argv) {
  DoctorOptions options;
  const std::vector<LongOption> table = {
      StringOption("store", &options.store_dsn),
      {"root", true,
       [&](const char* arg) {
         if (arg[0] != '/') return UsageError("--root needs an absolute path");
         options.root = arg;
         return absl::OkStatus();
       }},
      NonEmptyOption("user", &options.user, "--user needs a name or a uid"),
      FlagOption("json", &options.json),
  };
  if (absl::Status s = ParseOptionsOnly(argc, argv, table, &options.show_help); !s.ok()) {
    return s;
  }
  return options;
}

int DoctorCommand(const DoctorOptions& options) {
  ipclock::HostCheckOptions check;
  check.store_dsn = options.store_dsn;
  check.root = options.root;
  check.user = options.user;
  absl::StatusOr<ipclock::HostReport> report = ipclock::CheckHost(check);
  if (!report.ok()) return FailCommand("doctor", report.status());
  if (options.json) {
    PrintJson(*report);
  } else {
    PrintHuman(*report);
  }
  return report->risks > 0 ? kExitAtRisk : 0;
}

}  // namespace ipclock_cli
