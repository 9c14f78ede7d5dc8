// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "list_command.h"

#include <stdio.h>

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "exit_codes.h"
#include "getopt_util.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/store_factory.h"
#include "json.h"
#include "terminal_text.h"

namespace ipclock_cli {

namespace {

std::string TimeText(int64_t unix_seconds, bool utc) {
  return absl::FormatTime(utc ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S",
                          absl::FromUnixSeconds(unix_seconds),
                          utc ? absl::UTCTimeZone() : absl::LocalTimeZone());
}

// How long `row` has been held, where its store can tell.
std::optional<absl::Duration> HeldFor(const ipclock::HeldLock& row, absl::Time now) {
  if (!row.since) return std::nullopt;
  return std::max(absl::ZeroDuration(), now - absl::FromUnixSeconds(*row.since));
}

std::string WaitersJson(const std::vector<ipclock::LockWaiter>& waiters) {
  std::vector<std::string> objects;
  for (const ipclock::LockWaiter& w : waiters) {
    JsonObject o;
    o.AddInt("pid", w.pid == 0 ? std::nullopt : std::optional<int64_t>(w.pid));
    o.AddString("command", w.command);
    o.AddString("unit", w.unit);
    o.AddString("mode", w.mode);
    objects.push_back(o.Build());
  }
  return absl::StrCat("[", absl::StrJoin(objects, ","), "]");
}

std::string RowJson(const ipclock::HeldLock& row, absl::string_view store, absl::Time now) {
  JsonObject o;
  o.AddString("store", store);
  o.AddString("resource", row.resource);
  o.AddString("object", row.object);
  o.AddString("mode", row.mode);
  o.AddInt("pid", row.pid == 0 ? std::nullopt : std::optional<int64_t>(row.pid));
  o.AddString("command", row.command);
  o.AddString("command_line", row.command_line);
  o.AddString("unit", row.unit);
  o.AddString("cgroup", row.cgroup);
  if (row.since) {
    o.AddString("since", TimeText(*row.since, /*utc=*/true));
    o.AddInt("since_unix", *row.since);
    o.AddString("since_source", row.since_source);
    o.AddInt("held_seconds", absl::ToInt64Seconds(*HeldFor(row, now)));
  } else {
    o.AddRaw("since", "null");
    o.AddRaw("held_seconds", "null");
  }
  o.AddInt("fence", row.fence);
  o.AddInt("waiters", row.waiters);
  o.AddRaw("waiting", WaitersJson(row.waiter_list));
  for (const auto& [key, value] : row.text_details) o.AddString(key, value);
  for (const auto& [key, value] : row.number_details) o.AddInt(key, value);
  return o.Build();
}

std::string Details(const ipclock::HeldLock& row) {
  std::vector<std::string> parts;
  parts.push_back(row.object);
  for (const auto& [key, value] : row.text_details) parts.push_back(absl::StrCat(key, "=", value));
  for (const auto& [key, value] : row.number_details) parts.push_back(absl::StrCat(key, "=", value));
  return absl::StrJoin(parts, " ");
}

// Prints `cells` (a heading line first) as aligned columns.
void PrintColumns(const std::vector<std::vector<std::string>>& cells) {
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  for (const auto& line : cells) {
    std::string out;
    for (size_t i = 0; i < line.size(); ++i) {
      absl::StrAppend(&out, line[i]);
      if (i + 1 < line.size()) out.append(width[i] - line[i].size() + 2, ' ');
    }
    printf("%s\n", out.c_str());
  }
}

std::string DurationText(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Seconds(1)));
}

void PrintTable(const ipclock::HeldLocks& held, absl::Time now) {
  const std::string store = Printable(held.store);
  if (held.locks.empty()) {
    printf("No locks held in %s.\n", store.c_str());
    return;
  }
  std::vector<std::vector<std::string>> cells = {{"RESOURCE", "MODE", "PID", "COMMAND", "UNIT",
                                                  "SINCE", "HELD", "FENCE", "WAITERS",
                                                  "DETAILS"}};
  std::vector<std::vector<std::string>> waiting = {{"RESOURCE", "MODE", "PID", "COMMAND", "UNIT"}};
  std::set<std::pair<std::string, pid_t>> waiters_shown;
  bool mtime_note = false;
  for (const ipclock::HeldLock& row : held.locks) {
    mtime_note = mtime_note || (row.since.has_value() &&
                                absl::StrContains(row.since_source, "mtime"));
    // C-escaped: a name may hold tabs, newlines or escape sequences, and the
    // columns must stay columns. A process may name itself anything too.
    const std::string resource = row.resource.empty() ? "?" : absl::CHexEscape(row.resource);
    const std::optional<absl::Duration> held_for = HeldFor(row, now);
    cells.push_back({resource, Printable(row.mode), row.pid == 0 ? "?" : absl::StrCat(row.pid),
                     row.command.empty() ? "-" : absl::CHexEscape(row.command),
                     row.unit.empty() ? "-" : absl::CHexEscape(row.unit),
                     row.since ? TimeText(*row.since, /*utc=*/false) : "?",
                     held_for ? DurationText(*held_for) : "?",
                     row.fence ? absl::StrCat(*row.fence) : "-",
                     row.waiters ? absl::StrCat(*row.waiters) : "?",
                     Printable(Details(row))});
    for (const ipclock::LockWaiter& w : row.waiter_list) {
      // Each holder of a shared lock has the same waiters.
      if (!waiters_shown.emplace(row.resource, w.pid).second) continue;
      waiting.push_back({resource, w.mode.empty() ? "?" : Printable(w.mode),
                         w.pid == 0 ? "?" : absl::StrCat(w.pid),
                         w.command.empty() ? "-" : absl::CHexEscape(w.command),
                         w.unit.empty() ? "-" : absl::CHexEscape(w.unit)});
    }
  }
  printf("Locks held in %s:\n", store.c_str());
  PrintColumns(cells);
  if (waiting.size() > 1) {
    printf("Waiting for them:\n");
    PrintColumns(waiting);
  }
  if (mtime_note) {
    printf("SINCE of a lock file is its mtime: the lock was taken then or later (a holder\n"
           "that locks its file again leaves mtime as it was).\n");
  }
}

// A store that can never be listed is a usage error, as asking a store for
// anything else it cannot do is; one left out of this build, or a bad DSN,
// is what the library says it is.
absl::Status CheckListable(absl::string_view dsn) {
  absl::StatusOr<ipclock::StoreInfo> info = ipclock::FindStore(dsn);
  if (!info.ok()) return info.status();
  if (info->built && !info->listable) {
    std::vector<std::string> listable;
    for (const ipclock::StoreInfo& s : ipclock::KnownStores()) {
      if (s.listable) listable.push_back(s.name);
    }
    return UsageError(absl::StrCat(
        "the ", info->name, " store cannot be listed from outside",
        info->scope == ipclock::Scope::kProcess ? " (its locks live inside one process)"
        : info->scope == ipclock::Scope::kRemote ? " (ask its server, e.g. redis-cli or pg_locks)"
                                                 : "",
        "; stores that can: ", absl::StrJoin(listable, ", ")));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ListOptions> ParseListOptions(int argc, char** argv) {
  ListOptions options;
  const std::vector<LongOption> table = {
      StringOption("store", &options.store_dsn),
      NonEmptyOption("key", &options.key, "--key needs a non-empty name"),
      {"json", false,
       [&](const char*) {
         options.format = ListOptions::Format::kJson;
         return absl::OkStatus();
       }},
      {"format", true,
       [&](const char* arg) {
         if (absl::string_view(arg) == "table") {
           options.format = ListOptions::Format::kTable;
         } else if (absl::string_view(arg) == "json") {
           options.format = ListOptions::Format::kJson;
         } else if (absl::string_view(arg) == "openmetrics") {
           options.format = ListOptions::Format::kOpenMetrics;
         } else {
           return UsageError(absl::StrCat("invalid --format '", Printable(arg),
                                          "': expected table, json or openmetrics"));
         }
         return absl::OkStatus();
       }},
  };
  if (absl::Status s = ParseOptionsOnly(argc, argv, table, &options.show_help); !s.ok()) {
    return s;
  }
  return options;
}

int ListCommand(const ListOptions& options) {
  const absl::string_view dsn =
      options.store_dsn.empty() ? ipclock::kDefaultDsn : absl::string_view(options.store_dsn);
  if (absl::Status s = CheckListable(dsn); !s.ok()) return FailCommand("list", s);
  ipclock::ListRequest request;
  request.resource = options.key;
  absl::StatusOr<ipclock::HeldLocks> held = ipclock::ListHeldLocks(dsn, request);
  if (!held.ok()) {
    PrintError("ipclock list", held.status());
    return ExitCodeForStatus(held.status());
  }
  const absl::Time now = absl::Now();
  switch (options.format) {
    case ListOptions::Format::kJson: {
      std::vector<std::string> objects;
      for (const ipclock::HeldLock& row : held->locks) {
        objects.push_back(RowJson(row, held->store, now));
      }
      fputs(JsonArray(objects).c_str(), stdout);
      break;
    }
    case ListOptions::Format::kOpenMetrics:
      // The common ground of OpenMetrics and the Prometheus text format
      // (gauges only, and a closing "# EOF" that the latter reads as a
      // comment), for node_exporter's textfile collector.
      fputs(ipclock::HeldLocksToOpenMetrics({*held}, now).c_str(), stdout);
      break;
    case ListOptions::Format::kTable:
      PrintTable(*held, now);
      break;
  }
  return 0;
}

}  // namespace ipclock_cli
