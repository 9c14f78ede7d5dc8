// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list` for the SysV `semaphore` store: the sets the store's
// ListSemaphoreSets() finds whose lock semaphore (#0) is below its permits.
//
// Caveats:
//   * A set's key is a hash of the resource, so the resource can only be
//     named when the caller gives it (--key); other programs' 3- or
//     5-semaphore sets may show up too.
//   * GETPID is the last process to operate on #0. For a mutex that is the
//     holder; with several permits it is only the latest one to acquire or
//     release.
//   * Sets we may not read (mode, another IPC namespace) are not seen.

#include "absl/strings/str_format.h"
#include "list_sources.h"
#include "stores/sysv_semaphore_store.h"

namespace ipclock_cli {

absl::StatusOr<std::vector<LockRow>> ListSysvSemaphores(
    const std::optional<std::string>& key_resource, ipclock::SemaphoreKeyScheme scheme) {
  std::optional<int32_t> only_key;
  if (key_resource) {
    absl::StatusOr<int32_t> key = ipclock::SemaphoreIpcKey(*key_resource, scheme);
    if (!key.ok()) return key.status();
    only_key = *key;
  }
  absl::StatusOr<std::vector<ipclock::SemaphoreSetInfo>> sets = ipclock::ListSemaphoreSets();
  if (!sets.ok()) return sets.status();
  std::vector<LockRow> rows;
  for (const ipclock::SemaphoreSetInfo& set : *sets) {
    if (only_key && set.ipc_key != *only_key) continue;
    if (set.value >= set.permits) continue;  // not held
    LockRow row;
    if (key_resource) row.resource = *key_resource;
    row.object = absl::StrFormat("key 0x%08x", static_cast<uint32_t>(set.ipc_key));
    row.mode = set.permits == 1 ? "exclusive" : "permit";
    if (set.last_pid > 0) {
      row.pid = set.last_pid;
      row.command = CommandName(set.last_pid);
    }
    row.waiters = set.waiters;
    row.number_details.emplace_back("ipc_key", set.ipc_key);
    row.number_details.emplace_back("semid", set.semid);
    row.number_details.emplace_back("semval", set.value);
    row.number_details.emplace_back("permits", set.permits);
    row.text_details.emplace_back("layout", set.own_layout ? "ipclock" : "php");
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ipclock_cli
