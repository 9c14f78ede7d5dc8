// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "list_command.h"

#include <getopt.h>
#include <stdio.h>

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "core/store_registry.h"
#include "exit_codes.h"
#include "getopt_util.h"
#include "ipclock/flock_store.h"
#include "json.h"
#include "list_sources.h"
#include "platform/small_file.h"
#include "store_dsn.h"

namespace ipclock_cli {

namespace {

enum LongOnly : int {
  kOptStore = 256,
  kOptKey,
  kOptJson,
};

constexpr char kShortOptions[] = ":h";

const struct option kLongOptions[] = {
    {"store", required_argument, nullptr, kOptStore},
    {"key", required_argument, nullptr, kOptKey},
    {"json", no_argument, nullptr, kOptJson},
    {"help", no_argument, nullptr, 'h'},
    {nullptr, 0, nullptr, 0},
};

absl::Status Usage(absl::string_view message) { return UsageError("list", message); }

// Which store a DSN names and where its locks are, without opening it:
// opening would create a missing lock dir or segment.
absl::StatusOr<std::vector<LockRow>> ListStore(ipclock::Dsn& dsn,
                                               const ListOptions& options,
                                               std::string* describe) {
  const std::string& scheme = dsn.scheme();
  // Stores that list their own locks (a remote store reads its server).
  const ipclock::StoreEntry* entry = ipclock::FindStoreEntry(scheme);
  if (entry != nullptr && entry->driver != nullptr && entry->driver->list != nullptr) {
    ipclock::ListRequest request;
    if (options.key) request.resource = *options.key;
    *describe = dsn.redacted();
    absl::StatusOr<std::vector<ipclock::HeldLock>> held = entry->driver->list(dsn, request);
    if (!held.ok()) return held.status();
    std::vector<LockRow> rows;
    for (ipclock::HeldLock& h : *held) {
      rows.push_back(LockRow{std::move(h.resource), std::move(h.object), std::move(h.mode),
                             h.pid, std::move(h.command), h.since, std::move(h.since_source),
                             h.fence, h.waiters, std::move(h.text_details),
                             std::move(h.number_details)});
    }
    return rows;
  }
  if (scheme != "semaphore" && scheme != "posix-semaphore" && options.key) {
    return Usage(absl::StrCat("--key applies to the semaphore and posix-semaphore "
                              "stores, which keep only a hash of the name; ",
                              scheme, " stores show every name"));
  }
  if (scheme == "flock") {
    absl::StatusOr<std::string> dir = FlockDirOf(dsn);
    if (!dir.ok()) return dir.status();
    const bool any_file = FlockPathNaming(dsn);
    if (any_file && dir->empty()) {
      return Usage("a flock store with naming=path and no dir has no lock dir to list");
    }
    if (dir->empty()) *dir = ipclock::DefaultFlockDir();
    *describe = absl::StrCat("flock://", *dir);
    absl::StatusOr<std::vector<LockRow>> rows = ListFlockDir(*dir, any_file);
    // A lock dir that does not exist yet holds no locks.
    if (rows.status().code() == absl::StatusCode::kNotFound) return std::vector<LockRow>();
    return rows;
  }
  if (scheme == "shm") {
    *describe = absl::StrCat("shm://", dsn.host());
    return ListShmSegment(dsn.host());
  }
  if (scheme == "semaphore") {
    ipclock::SemaphoreKeyScheme key_scheme = ipclock::SemaphoreKeyScheme::kMd5;
    std::optional<std::string> name = dsn.TakeOption("key_scheme");
    if (name == std::optional<std::string>("xxh3")) {
      key_scheme = ipclock::SemaphoreKeyScheme::kXxh3;
    } else if (name && *name != "md5") {
      return Usage(absl::StrCat("key_scheme=", *name, ": expected md5 or xxh3"));
    }
    *describe = "semaphore";
    return ListSysvSemaphores(options.key, key_scheme);
  }
  if (scheme == "posix-semaphore") {
    std::string prefix = dsn.TakeOption("prefix").value_or("ipclock");
    *describe = absl::StrCat("posix-semaphore (prefix=", prefix, ")");
    return ListPosixSemaphores(options.key, prefix);
  }
  if (scheme == "in-memory") {
    return Usage("in-memory locks live inside one process; there is nothing to list");
  }
  return absl::UnimplementedError(absl::StrCat(
      "ipclock list: listing ", scheme,
      " stores is not supported; ask the server (e.g. redis-cli, pg_locks)"));
}

std::string TimeText(int64_t unix_seconds, bool utc) {
  return absl::FormatTime(utc ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S",
                          absl::FromUnixSeconds(unix_seconds),
                          utc ? absl::UTCTimeZone() : absl::LocalTimeZone());
}

std::string RowJson(const LockRow& row, absl::string_view store) {
  JsonObject o;
  o.AddString("store", store);
  o.AddString("resource", row.resource);
  o.AddString("object", row.object);
  o.AddString("mode", row.mode);
  o.AddInt("pid", row.pid == 0 ? std::nullopt : std::optional<int64_t>(row.pid));
  o.AddString("command", row.command);
  if (row.since) {
    o.AddString("since", TimeText(*row.since, /*utc=*/true));
    o.AddInt("since_unix", *row.since);
    o.AddString("since_source", row.since_source);
  } else {
    o.AddRaw("since", "null");
  }
  o.AddInt("fence", row.fence);
  o.AddInt("waiters", row.waiters);
  for (const auto& [key, value] : row.text_details) o.AddString(key, value);
  for (const auto& [key, value] : row.number_details) o.AddInt(key, value);
  return o.Build();
}

std::string Details(const LockRow& row) {
  std::vector<std::string> parts;
  parts.push_back(row.object);
  for (const auto& [key, value] : row.text_details) parts.push_back(absl::StrCat(key, "=", value));
  for (const auto& [key, value] : row.number_details) parts.push_back(absl::StrCat(key, "=", value));
  return absl::StrJoin(parts, " ");
}

void PrintTable(const std::vector<LockRow>& rows, absl::string_view store) {
  if (rows.empty()) {
    printf("No locks held in %.*s.\n", static_cast<int>(store.size()), store.data());
    return;
  }
  std::vector<std::vector<std::string>> cells = {
      {"RESOURCE", "MODE", "PID", "COMMAND", "SINCE", "FENCE", "WAITERS", "DETAILS"}};
  bool mtime_note = false;
  for (const LockRow& row : rows) {
    mtime_note = mtime_note || (row.since.has_value() &&
                                absl::StrContains(row.since_source, "mtime"));
    // Escaped: a name may hold tabs, newlines or escape sequences.
    cells.push_back({row.resource.empty() ? "?" : absl::CHexEscape(row.resource), row.mode,
                     row.pid == 0 ? "?" : absl::StrCat(row.pid),
                     row.command.empty() ? "-" : row.command,
                     row.since ? TimeText(*row.since, /*utc=*/false) : "?",
                     row.fence ? absl::StrCat(*row.fence) : "-",
                     row.waiters ? absl::StrCat(*row.waiters) : "?", Details(row)});
  }
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  printf("Locks held in %.*s:\n", static_cast<int>(store.size()), store.data());
  for (const auto& line : cells) {
    std::string out;
    for (size_t i = 0; i < line.size(); ++i) {
      absl::StrAppend(&out, line[i]);
      if (i + 1 < line.size()) out.append(width[i] - line[i].size() + 2, ' ');
    }
    printf("%s\n", out.c_str());
  }
  if (mtime_note) {
    printf("SINCE of a lock file is its mtime, which the holder record sets at "
           "acquisition.\n");
  }
}

}  // namespace

std::string CommandName(pid_t pid) {
  if (pid <= 0) return "";
  std::optional<std::string> comm =
      ipclock::ReadSmallFile(absl::StrCat("/proc/", pid, "/comm"), 64);
  if (!comm) return "";
  while (!comm->empty() && comm->back() == '\n') comm->pop_back();
  return *comm;
}

absl::StatusOr<ListOptions> ParseListOptions(int argc, char** argv) {
  ListOptions options;
  absl::Status s = ParseOptionsOnly(
      argc, argv, kShortOptions, kLongOptions, "list", &options.show_help,
      [&](int opt, const char* arg) -> absl::Status {
        switch (opt) {
          case kOptStore:
            options.store_dsn = arg;
            break;
          case kOptKey:
            if (arg[0] == '\0') return Usage("--key needs a non-empty name");
            options.key = arg;
            break;
          case kOptJson:
            options.json = true;
            break;
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return options;
}

int ListCommand(const ListOptions& options) {
  absl::StatusOr<ipclock::Dsn> dsn = ParseStoreDsn(options.store_dsn);
  std::string describe;
  absl::StatusOr<std::vector<LockRow>> rows =
      dsn.ok() ? ListStore(*dsn, options, &describe) : dsn.status();
  if (!rows.ok()) {
    PrintError("ipclock list", rows.status());
    return ExitCodeForStatus(rows.status());
  }
  if (options.json) {
    std::vector<std::string> objects;
    for (const LockRow& row : *rows) objects.push_back(RowJson(row, describe));
    fputs(JsonArray(objects).c_str(), stdout);
  } else {
    PrintTable(*rows, describe);
  }
  return 0;
}

}  // namespace ipclock_cli
