// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/removeipc_guard.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ipclock/flock_store.h"

namespace ipclock {

namespace {

// One "already warned" flag per IpcKind, and one for tmp-cleaner notes: a
// daemon that opens a store per request must not fill its log.
constexpr int kWarnSlots = 4;
std::atomic<bool> g_warned[kWarnSlots];

int WarnSlot(const RemoveIpcReport& report) {
  if (!report.at_risk) return 3;
  switch (report.kind) {
    case IpcKind::kSysV:
      return 0;
    case IpcKind::kPosixShm:
      return 1;
    case IpcKind::kLockDir:
      return 2;
  }
  return 2;
}

void WarnOnce(const RemoveIpcReport& report, absl::string_view store) {
  if (g_warned[WarnSlot(report)].exchange(true)) return;
  std::string line = absl::StrCat(
      "ipclock: warning: ", store, ": ", report.reason, "; ", report.advice,
      " (DSN option removeipc=ignore silences this, removeipc=refuse makes "
      "it an error)\n");
  // Formatted first and written with one call, so that threads and other
  // processes sharing the stream cannot split the line.
  fputs(line.c_str(), stderr);
  fflush(stderr);
}

// What the store that `dsn` names keeps its locks in, or nullopt for stores
// logind leaves alone (in-memory, remote servers). `lock_dir` gets a flock
// store's dir.
std::optional<IpcKind> KindOf(const Dsn& dsn, std::string* lock_dir) {
  const std::string& scheme = dsn.scheme();
  if (scheme == "semaphore") return IpcKind::kSysV;
  if (scheme == "shm" || scheme == "posix-semaphore") return IpcKind::kPosixShm;
  if (scheme != "flock") return std::nullopt;
  if (!dsn.path().empty()) {
    *lock_dir = dsn.path();
    return IpcKind::kLockDir;
  }
  // Exact-path naming without a dir locks whatever paths it is given: there
  // is no dir to judge.
  std::optional<std::string> naming = dsn.PeekOption("naming");
  if (naming && *naming == "path") return std::nullopt;
  *lock_dir = DefaultFlockDir();
  return IpcKind::kLockDir;
}

}  // namespace

std::string RemoveIpcRoot() {
  const char* root = secure_getenv("IPCLOCK_REMOVEIPC_ROOT");
  return root != nullptr && root[0] != '\0' ? root : "/";
}

void ResetRemoveIpcWarningsForTesting() {
  for (std::atomic<bool>& w : g_warned) w.store(false);
}

absl::Status ApplyRemoveIpcPolicy(RemoveIpcPolicy policy,
                                  const RemoveIpcReport& report,
                                  absl::string_view store) {
  if (policy == RemoveIpcPolicy::kIgnore) return absl::OkStatus();
  if (!report.at_risk && !report.may_be_cleaned) return absl::OkStatus();
  if (policy == RemoveIpcPolicy::kRefuse && report.at_risk) {
    return absl::FailedPreconditionError(absl::StrCat(
        store, ": refused by removeipc=refuse: ", report.reason, "; ",
        report.advice));
  }
  WarnOnce(report, store);
  return absl::OkStatus();
}

absl::Status GuardRemoveIpc(Dsn& dsn, const StoreOptions& options) {
  RemoveIpcPolicy policy = options.remove_ipc;
  if (std::optional<std::string> v = dsn.TakeOption("removeipc")) {
    std::string value = absl::AsciiStrToLower(*v);
    if (value == "warn") {
      policy = RemoveIpcPolicy::kWarn;
    } else if (value == "refuse") {
      policy = RemoveIpcPolicy::kRefuse;
    } else if (value == "ignore") {
      policy = RemoveIpcPolicy::kIgnore;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "ipclock: bad DSN \"", dsn.redacted(), "\": option removeipc=", *v,
          ": expected warn, refuse or ignore"));
    }
  }
  if (policy == RemoveIpcPolicy::kIgnore) return absl::OkStatus();
  std::string lock_dir;
  std::optional<IpcKind> kind = KindOf(dsn, &lock_dir);
  if (!kind) return absl::OkStatus();
  // The effective uid owns what the store creates (files, IPC objects).
  RemoveIpcReport report =
      CheckRemoveIpc(RemoveIpcRoot(), geteuid(), *kind, lock_dir);
  std::string store = *kind == IpcKind::kLockDir
                          ? absl::StrCat("flock://", report.lock_dir)
                          : dsn.redacted();
  return ApplyRemoveIpcPolicy(policy, report, store);
}

}  // namespace ipclock
