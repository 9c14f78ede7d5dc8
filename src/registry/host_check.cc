// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// CheckHost(): resolves the user, the store and its lock dirs, then runs
// the checks of host_check_lock_dirs.cc and host_check_kernel.cc.

#include "ipclock/admin/host_check.h"

#include <unistd.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/dsn.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/store_factory.h"
#include "platform/environment.h"
#include "platform/host_probe.h"
#include "registry/host_check_internal.h"
#include "registry/store_registry.h"
#include "stores/flock/flock_inspect.h"

namespace ipclock {
namespace host_check {

std::string Target::InTree(absl::string_view path) const {
  absl::string_view r = root;
  while (!r.empty() && r.back() == '/') r.remove_suffix(1);
  return absl::StrCat(r, path);
}

std::string Target::OutOfTree(absl::string_view path) const {
  const std::string r = InTree("");
  if (!r.empty() && absl::ConsumePrefix(&path, r) && path.empty()) return "/";
  return std::string(path);
}

std::string Target::KernelNote() const {
  return host ? "" : " (this host's kernel, not the tree's)";
}

namespace {

// DefaultFlockDir()'s rule for `target.uid`.
void SetDefaultFlockDirs(Target* target) {
  target->lock_dirs.clear();
  if (target->uid == 0) {
    target->lock_dirs.push_back({"/run/lock/ipclock", ""});
  } else if (target->is_current_user) {
    target->lock_dirs.push_back({DefaultFlockDir(), ""});
  } else {
    // A process whose environment we cannot see: logind sets
    // XDG_RUNTIME_DIR=/run/user/UID in login sessions; cron jobs and system
    // services run without it.
    target->lock_dirs.push_back({absl::StrCat("/run/user/", target->uid, "/ipclock"),
                                 "run in a login session (XDG_RUNTIME_DIR set)"});
    target->lock_dirs.push_back({absl::StrCat("/tmp/ipclock-", target->uid),
                                 "run without a session (cron, a system service)"});
  }
}

// What the DSN names, without building the store (which would create it).
absl::Status DescribeStore(const HostCheckOptions& options, Target* target) {
  target->explicit_store = !options.store_dsn.empty();
  absl::StatusOr<Dsn> dsn =
      Dsn::Parse(options.store_dsn.empty() ? kDefaultDsn : absl::string_view(options.store_dsn));
  if (!dsn.ok()) return dsn.status();
  const StoreEntry* entry = FindStoreEntry(dsn->scheme());
  if (entry == nullptr) {
    return BadDsn(*dsn, absl::StrCat("unknown store '", dsn->scheme(), "'"));
  }
  target->store = std::string(entry->name);
  target->ipc_kind = entry->ipc;
  // The DSN's own faults, as StoreFromDsn() would tell them (a store this
  // build left out has nothing here to check them).
  if (entry->driver != nullptr) {
    Dsn checked = *dsn;
    if (absl::StatusOr<Capabilities> caps = CheckStore(checked, StoreOptions()); !caps.ok()) {
      return caps.status();
    }
  }
  if (entry->ipc != IpcKind::kLockDir) return absl::OkStatus();
  absl::StatusOr<FlockDsnTarget> flock = ReadFlockDsn(*dsn);
  if (!flock.ok()) return flock.status();
  if (!flock->dir.empty()) {
    target->lock_dirs.push_back({flock->dir, ""});
  } else if (!flock->path_naming) {
    SetDefaultFlockDirs(target);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace host_check

absl::StatusOr<HostReport> CheckHost(const HostCheckOptions& options) {
  using host_check::Target;
  Target target;
  target.root = options.root;
  if (target.root.empty() || target.root[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("ipclock: the root dir must be an absolute path, not \"",
                     absl::CHexEscape(target.root), "\""));
  }
  const PathInfo root = InspectPath(target.root, /*follow=*/true);
  if (root.error != 0 || !root.is_dir) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: the root dir \"", absl::CHexEscape(target.root), "\" is not a directory"));
  }
  target.host = target.InTree("").empty();

  HostReport report;
  UserEntry user = UserOfUid(target.root, EffectiveUid());
  if (!options.user.empty()) {
    std::optional<UserEntry> found = LookUpUser(target.root, options.user);
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ipclock: unknown user \"", absl::CHexEscape(options.user), "\"",
          target.host ? "" : absl::StrCat(" in ", target.InTree("/etc/passwd"))));
    }
    user = *found;
  }
  target.uid = user.uid;
  target.is_current_user = target.host && target.uid == EffectiveUid();
  if (absl::Status s = host_check::DescribeStore(options, &target); !s.ok()) return s;

  host_check::CheckRemoveIpcSetting(target, &report.findings);
  host_check::CheckLockDirs(target, &report.findings);
  host_check::CheckSysvLimits(target, &report.findings);
  host_check::CheckIoUring(target, &report.findings);
  host_check::CheckTimedWaitSignal(target, &report.findings);

  report.uid = target.uid;
  report.user_name = user.name;
  report.root = target.root;
  report.host = target.host;
  report.store = target.store;
  for (const HostFinding& f : report.findings) report.risks += f.level == HostFinding::Level::kRisk;
  return report;
}

}  // namespace ipclock
