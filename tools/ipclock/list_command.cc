// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "list_command.h"

#include <stdio.h>

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "exit_codes.h"
#include "getopt_util.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/store_factory.h"
#include "json.h"
#include "output_file.h"
#include "terminal_text.h"
#include "time_calls.h"

namespace ipclock_cli {

namespace {

std::string TimeText(int64_t unix_seconds, bool utc) {
  return absl::FormatTime(utc ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S",
                          absl::FromUnixSeconds(unix_seconds),
                          utc ? absl::UTCTimeZone() : absl::LocalTimeZone());
}

// How long `since` (Unix seconds) is before `now`, never below zero.
absl::Duration Since(int64_t since, absl::Time now) {
  return std::max(absl::ZeroDuration(), now - absl::FromUnixSeconds(since));
}

// "since" (UTC) and "since_unix" of `since`, then `since_source` if given,
// then `age_key`: how long before `now` that was. A `since` the store does
// not know gives null for "since" and `age_key`.
void AddSince(JsonObject* o, const std::optional<int64_t>& since, const std::string* since_source,
              absl::string_view age_key, absl::Time now) {
  if (!since) {
    o->AddRaw("since", "null");
    o->AddRaw(age_key, "null");
    return;
  }
  o->AddString("since", TimeText(*since, /*utc=*/true));
  o->AddInt("since_unix", *since);
  if (since_source != nullptr) o->AddString("since_source", *since_source);
  o->AddInt(age_key, absl::ToInt64Seconds(Since(*since, now)));
}

std::string WaitersJson(const std::vector<ipclock::LockWaiter>& waiters, absl::Time now) {
  std::vector<std::string> objects;
  for (const ipclock::LockWaiter& w : waiters) {
    JsonObject o;
    o.AddInt("pid", w.pid == 0 ? std::nullopt : std::optional<int64_t>(w.pid));
    o.AddString("command", w.command);
    o.AddString("unit", w.unit);
    o.AddString("mode", w.mode);
    AddSince(&o, w.since, /*since_source=*/nullptr, "waited_seconds", now);
    objects.push_back(o.Build());
  }
  return absl::StrCat("[", absl::StrJoin(objects, ","), "]");
}

std::string RowJson(const ipclock::HeldLock& row, absl::string_view store, absl::Time now) {
  JsonObject o;
  o.AddString("store", store);
  o.AddString("resource", row.resource);
  o.AddString("object", row.object);
  o.AddString("lock", row.lock);
  o.AddString("mode", row.mode);
  if (row.holders) o.AddInt("holders", *row.holders);
  o.AddInt("pid", row.pid == 0 ? std::nullopt : std::optional<int64_t>(row.pid));
  o.AddString("command", row.command);
  o.AddString("command_line", row.command_line);
  o.AddString("unit", row.unit);
  o.AddString("cgroup", row.cgroup);
  AddSince(&o, row.since, &row.since_source, "held_seconds", now);
  o.AddInt("fence", row.fence);
  o.AddInt("waiters", row.waiters);
  o.AddRaw("waiting", WaitersJson(row.waiter_list, now));
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

// `cells` (a heading line first) as aligned columns.
std::string Columns(const std::vector<std::vector<std::string>>& cells) {
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], DisplayWidth(line[i]));
  }
  std::string out;
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) {
      absl::StrAppend(&out, line[i]);
      if (i + 1 < line.size()) out.append(width[i] - DisplayWidth(line[i]) + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

std::string DurationText(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Seconds(1)));
}

std::string Table(const ipclock::HeldLocks& held, absl::Time now) {
  const std::string store = Printable(held.store);
  if (held.locks.empty()) return absl::StrCat("No locks held in ", store, ".\n");
  std::vector<std::vector<std::string>> cells = {{"RESOURCE", "MODE", "PID", "COMMAND", "UNIT",
                                                  "SINCE", "HELD", "FENCE", "WAITERS",
                                                  "DETAILS"}};
  std::vector<std::vector<std::string>> waiting = {
      {"RESOURCE", "MODE", "PID", "COMMAND", "UNIT", "WAITED"}};
  std::set<std::pair<std::string, pid_t>> waiters_shown;
  bool mtime_note = false;
  for (const ipclock::HeldLock& row : held.locks) {
    mtime_note = mtime_note || (row.since.has_value() &&
                                absl::StrContains(row.since_source, "mtime"));
    // Escaped: a name may hold tabs, newlines or escape sequences, and the
    // columns must stay columns. A process may name itself anything too.
    const std::string resource = row.resource.empty() ? "?" : UnambiguousPrintable(row.resource);
    cells.push_back({resource, Printable(row.mode), row.pid == 0 ? "?" : absl::StrCat(row.pid),
                     row.command.empty() ? "-" : UnambiguousPrintable(row.command),
                     row.unit.empty() ? "-" : UnambiguousPrintable(row.unit),
                     row.since ? TimeText(*row.since, /*utc=*/false) : "?",
                     row.since ? DurationText(Since(*row.since, now)) : "?",
                     row.fence ? absl::StrCat(*row.fence) : "-",
                     row.waiters ? absl::StrCat(*row.waiters) : "?",
                     Printable(Details(row))});
    for (const ipclock::LockWaiter& w : row.waiter_list) {
      // Each holder of a shared lock has the same waiters.
      if (!waiters_shown.emplace(row.lock, w.pid).second) continue;
      waiting.push_back({resource, w.mode.empty() ? "?" : Printable(w.mode),
                         w.pid == 0 ? "?" : absl::StrCat(w.pid),
                         w.command.empty() ? "-" : UnambiguousPrintable(w.command),
                         w.unit.empty() ? "-" : UnambiguousPrintable(w.unit),
                         w.since ? DurationText(Since(*w.since, now)) : "?"});
    }
  }
  std::string out = absl::StrCat("Locks held in ", store, ":\n", Columns(cells));
  if (waiting.size() > 1) absl::StrAppend(&out, "Waiting for them:\n", Columns(waiting));
  if (mtime_note) {
    absl::StrAppend(&out,
                    "SINCE of a lock file is its mtime: the lock was taken then or later (a "
                    "holder\nthat locks its file again leaves mtime as it was).\n");
  }
  return out;
}

// Writes `text` to stdout or --output; returns `status`, or the failure to
// write if it was 0.
int Emit(const ListOptions& options, const std::string& text, int status) {
  if (options.output.empty()) {
    fputs(text.c_str(), stdout);
  } else if (absl::Status s = ReplaceFile(options.output, text); !s.ok()) {
    PrintError("ipclock list", s);
    if (status == 0) status = ExitCodeForStatus(s);
  }
  return status;
}

// --- one semaphore (--limit) ----------------------------------------------------

std::string SemaphoreJson(const ipclock::HeldSemaphore& sem, absl::Time now) {
  JsonObject o;
  o.AddString("store", sem.store);
  o.AddString("resource", sem.resource);
  o.AddInt("limit", sem.limit);
  o.AddInt("in_use", sem.in_use);
  o.AddInt("free", std::max<int64_t>(0, sem.limit - sem.in_use));
  if (sem.holders) {
    std::vector<std::string> holders;
    for (const ipclock::SemaphoreHolder& h : *sem.holders) {
      JsonObject j;
      j.AddInt("pid", h.pid == 0 ? std::nullopt : std::optional<int64_t>(h.pid));
      j.AddString("command", h.command);
      j.AddString("command_line", h.command_line);
      j.AddString("unit", h.unit);
      if (!h.host.empty()) j.AddString("host", h.host);
      j.AddInt("weight", h.weight);
      j.AddRaw("slots", absl::StrCat("[", absl::StrJoin(h.slots, ","), "]"));
      AddSince(&j, h.since, &h.since_source, "held_seconds", now);
      j.AddInt("fence", h.fence);
      holders.push_back(j.Build());
    }
    o.AddRaw("holders", absl::StrCat("[", absl::StrJoin(holders, ","), "]"));
  } else {
    o.AddRaw("holders", "null");
    o.AddInt("last_pid", sem.last_pid == 0 ? std::nullopt : std::optional<int64_t>(sem.last_pid));
  }
  o.AddRaw("dead_slots", absl::StrCat("[", absl::StrJoin(sem.dead_slots, ","), "]"));
  o.AddInt("waiters", sem.waiters);
  o.AddRaw("waiting", WaitersJson(sem.waiter_list, now));
  return o.Build();
}

std::string SemaphoreTable(const ipclock::HeldSemaphore& sem, absl::Time now) {
  std::string out = absl::StrCat(
      "Semaphore ", UnambiguousPrintable(sem.resource), " in ", Printable(sem.store), ": limit ",
      sem.limit, ", ", sem.in_use, sem.in_use == 1 ? " permit" : " permits", " in use, ",
      std::max<int64_t>(0, sem.limit - sem.in_use), " free.\n");
  if (!sem.holders) {
    // The SysV set: one kernel count, with no record of who took it.
    if (sem.in_use > 0) {
      absl::StrAppend(&out, "The set counts permits without their holders; the last process to "
                            "take or give one was ",
                      sem.last_pid == 0 ? "?" : absl::StrCat(sem.last_pid), ".\n");
    }
    if (sem.waiters) absl::StrAppend(&out, *sem.waiters, " waiting (GETNCNT).\n");
    return out;
  }
  if (!sem.holders->empty()) {
    std::vector<std::vector<std::string>> cells = {
        {"PID", "COMMAND", "UNIT", "WEIGHT", "SLOTS", "SINCE", "HELD", "FENCE"}};
    for (const ipclock::SemaphoreHolder& h : *sem.holders) {
      cells.push_back({h.pid == 0 ? "?" : absl::StrCat(h.pid),
                       h.command.empty() ? "-" : UnambiguousPrintable(h.command),
                       h.unit.empty() ? "-" : UnambiguousPrintable(h.unit),
                       absl::StrCat(h.weight), absl::StrJoin(h.slots, ","),
                       h.since ? TimeText(*h.since, /*utc=*/false) : "?",
                       h.since ? DurationText(Since(*h.since, now)) : "?",
                       h.fence ? absl::StrCat(*h.fence) : "-"});
    }
    absl::StrAppend(&out, Columns(cells));
  }
  for (uint32_t slot : sem.dead_slots) {
    absl::StrAppend(&out, "Slot ", slot,
                    "'s holder died holding it: the next to take it is told.\n");
  }
  if (!sem.waiter_list.empty()) {
    std::vector<std::vector<std::string>> waiting = {{"PID", "COMMAND", "UNIT", "WAITED"}};
    for (const ipclock::LockWaiter& w : sem.waiter_list) {
      waiting.push_back({w.pid == 0 ? "?" : absl::StrCat(w.pid),
                         w.command.empty() ? "-" : UnambiguousPrintable(w.command),
                         w.unit.empty() ? "-" : UnambiguousPrintable(w.unit),
                         w.since ? DurationText(Since(*w.since, now)) : "?"});
    }
    absl::StrAppend(&out, "Waiting on a slot:\n", Columns(waiting));
  }
  return out;
}

int SemaphoreListCommand(const ListOptions& options, const std::vector<std::string>& dsns) {
  int status = 0;
  std::vector<std::string> parts;
  const absl::Time now = WallClockNow();
  for (const std::string& dsn : dsns) {
    absl::StatusOr<ipclock::HeldSemaphore> sem =
        ipclock::ListHeldSemaphore(dsn, *options.key, options.limit);
    if (!sem.ok()) {
      PrintError("ipclock list", sem.status());
      if (status == 0) status = ExitCodeForStatus(sem.status());
      continue;
    }
    for (const std::string& note : sem->notes) {
      absl::string_view text = note;
      absl::ConsumePrefix(&text, "ipclock: ");
      Say(absl::StrCat("warning: ", text));
    }
    parts.push_back(options.format == ListOptions::Format::kJson ? SemaphoreJson(*sem, now)
                                                                 : SemaphoreTable(*sem, now));
  }
  const std::string text = options.format == ListOptions::Format::kJson
                               ? JsonArray(parts)
                               : absl::StrJoin(parts, "");
  return Emit(options, text, status);
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
  // The option that chose the format, if one did: a second that chooses
  // another is a usage error, not a silent last-one-wins (a script that
  // says --json and gets OpenMetrics parses neither).
  std::string format_by;
  const auto choose = [&](ListOptions::Format format, std::string by) -> absl::Status {
    if (!format_by.empty() && format != options.format) {
      return UsageError(absl::StrCat(format_by, " and ", by,
                                     " ask for different formats: give one"));
    }
    options.format = format;
    format_by = std::move(by);
    return absl::OkStatus();
  };
  const std::vector<LongOption> table = {
      {"store", true,
       [&](const char* arg) {
         options.store_dsns.emplace_back(arg);
         return absl::OkStatus();
       }},
      NonEmptyOption("output", &options.output, "--output needs a file name"),
      NonEmptyOption("key", &options.key, "--key needs a non-empty name"),
      {"limit", true,
       [&](const char* arg) {
         return SetWholeNumber("--limit", arg, uint32_t{1}, uint32_t{32767},
                               "expected a whole number from 1 to 32767", &options.limit);
       }},
      {"json", false,
       [&](const char*) { return choose(ListOptions::Format::kJson, "--json"); }},
      {"format", true,
       [&](const char* arg) {
         const std::string by = absl::StrCat("--format=", Printable(arg));
         if (absl::string_view(arg) == "table") return choose(ListOptions::Format::kTable, by);
         if (absl::string_view(arg) == "json") return choose(ListOptions::Format::kJson, by);
         if (absl::string_view(arg) == "openmetrics") {
           return choose(ListOptions::Format::kOpenMetrics, by);
         }
         return UsageError(absl::StrCat("invalid --format '", Printable(arg),
                                        "': expected table, json or openmetrics"));
       }},
  };
  if (absl::Status s = ParseOptionsOnly(argc, argv, table, &options.show_help); !s.ok()) {
    return s;
  }
  if (options.limit > 0 && !options.show_help) {
    if (!options.key) return UsageError("--limit shows the semaphore of a --key: give --key NAME");
    if (options.format == ListOptions::Format::kOpenMetrics) {
      return UsageError("--limit shows a semaphore as a table or JSON, not openmetrics");
    }
  }
  return options;
}

int ListCommand(const ListOptions& options) {
  std::vector<std::string> dsns = options.store_dsns;
  if (dsns.empty()) dsns.emplace_back(ipclock::kDefaultDsn);
  // Every store is checked before any is listed: a command line that can
  // never work fails whole, and leaves --output as it was.
  for (size_t i = 0; i < dsns.size(); ++i) {
    if (std::find(dsns.begin(), dsns.begin() + i, dsns[i]) != dsns.begin() + i) {
      return FailCommand("list", UsageError(absl::StrCat("--store '", Printable(dsns[i]),
                                                         "' is given twice")));
    }
    if (absl::Status s = CheckListable(dsns[i]); !s.ok()) return FailCommand("list", s);
  }
  if (options.limit > 0) return SemaphoreListCommand(options, dsns);
  ipclock::ListRequest request;
  request.resource = options.key;
  // One failed store does not keep the others from being listed; the exit
  // status is the first failure's.
  int status = 0;
  std::vector<std::optional<ipclock::HeldLocks>> held(dsns.size());
  for (size_t i = 0; i < dsns.size(); ++i) {
    absl::StatusOr<ipclock::HeldLocks> listed = ipclock::ListHeldLocks(dsns[i], request);
    if (listed.ok()) {
      for (const std::string& why : listed->skipped) {
        absl::string_view text = why;
        absl::ConsumePrefix(&text, "ipclock: ");
        Say(absl::StrCat("warning: ", text, "; left out of the listing"));
      }
      held[i] = *std::move(listed);
      continue;
    }
    PrintError("ipclock list", listed.status());
    if (status == 0) status = ExitCodeForStatus(listed.status());
  }
  const absl::Time now = WallClockNow();
  std::string text;
  switch (options.format) {
    case ListOptions::Format::kJson: {
      std::vector<std::string> objects;
      for (const std::optional<ipclock::HeldLocks>& store : held) {
        if (!store) continue;
        for (const ipclock::HeldLock& row : store->locks) {
          objects.push_back(RowJson(row, store->store, now));
        }
      }
      text = JsonArray(objects);
      break;
    }
    case ListOptions::Format::kOpenMetrics: {
      // A failed store keeps what the file said of it last, for
      // Prometheus to go on seeing its locks beside its success gauge at 0.
      std::optional<std::string> previous;
      if (!options.output.empty() && status != 0) {
        absl::StatusOr<std::optional<std::string>> read = ReadFileIfAny(options.output);
        if (read.ok()) {
          previous = *std::move(read);
        } else {
          PrintError("ipclock list", read.status());
        }
      }
      std::vector<ipclock::StoreListing> listings(dsns.size());
      for (size_t i = 0; i < dsns.size(); ++i) {
        listings[i].dsn = dsns[i];
        if (held[i]) {
          listings[i].held = &*held[i];
        } else if (previous) {
          listings[i].kept = ipclock::KeptSamples(*previous, dsns[i]);
        }
      }
      text = ipclock::ListingsToOpenMetrics(listings, now);
      break;
    }
    case ListOptions::Format::kTable:
      for (const std::optional<ipclock::HeldLocks>& store : held) {
        if (store) absl::StrAppend(&text, Table(*store, now));
      }
      break;
  }
  return Emit(options, text, status);
}

}  // namespace ipclock_cli
