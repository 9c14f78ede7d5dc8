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
#include "core/diagnostics.h"
#include "platform/environment.h"

namespace ipclock {

namespace {

// One "already warned" flag per IpcKind, and one for tmp-cleaner notes: a
// daemon that opens a store per request must not fill its log.
std::atomic<bool> g_warned[kIpcKinds + 1];

size_t WarnSlot(const RemoveIpcReport& report) {
  return report.at_risk ? static_cast<size_t>(report.kind) : kIpcKinds;
}

void WarnOnce(const RemoveIpcReport& report, absl::string_view store) {
  if (g_warned[WarnSlot(report)].exchange(true)) return;
  std::string line = absl::StrCat(
      "ipclock: warning: ", store, ": ", report.reason, "; ", report.advice,
      " (DSN option removeipc=ignore silences this, removeipc=refuse makes "
      "it an error)");
  EmitNotice(DiagnosticSeverity::kWarning, line);
}

}  // namespace

std::string RemoveIpcRoot() {
  const char* root = TrustedEnvironmentValue("IPCLOCK_REMOVEIPC_ROOT");
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

absl::StatusOr<RemoveIpcPolicy> TakeRemoveIpcPolicy(Dsn& dsn,
                                                    RemoveIpcPolicy fallback) {
  std::optional<std::string> v = dsn.TakeOption("removeipc");
  if (!v) return fallback;
  std::string value = absl::AsciiStrToLower(*v);
  if (value == "warn") return RemoveIpcPolicy::kWarn;
  if (value == "refuse") return RemoveIpcPolicy::kRefuse;
  if (value == "ignore") return RemoveIpcPolicy::kIgnore;
  return BadDsn(dsn, absl::StrCat("option removeipc=", *v,
                                  ": expected warn, refuse or ignore"));
}

absl::Status TakeRemoveIpcPolicy(Dsn& dsn, RemoveIpcPolicy fallback, RemoveIpcPolicy* policy) {
  absl::StatusOr<RemoveIpcPolicy> taken = TakeRemoveIpcPolicy(dsn, fallback);
  if (!taken.ok()) return taken.status();
  *policy = *taken;
  return absl::OkStatus();
}

absl::Status GuardRemoveIpc(const StoreEntry& entry, absl::string_view lock_dir,
                            RemoveIpcPolicy policy, absl::string_view store) {
  if (policy == RemoveIpcPolicy::kIgnore || !entry.ipc) return absl::OkStatus();
  // The effective uid owns what the store creates (files, IPC objects).
  RemoveIpcReport report = CheckRemoveIpc(RemoveIpcRoot(), EffectiveUid(), *entry.ipc, lock_dir,
                                          RemoveIpcDetail::kVerdict);
  return ApplyRemoveIpcPolicy(policy, report, store);
}

}  // namespace ipclock
