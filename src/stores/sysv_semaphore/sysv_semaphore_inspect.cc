// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/sysv_semaphore/sysv_semaphore_inspect.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ipclock/stores/semaphore_store.h"
#include "platform/proc_pid.h"
#include "stores/sysv_semaphore/sysv_semaphore_store.h"

namespace ipclock {

absl::StatusOr<HeldLocks> ListSemaphoreLocks(Dsn& dsn, const ListRequest& request) {
  if (dsn.has_authority() || !dsn.path().empty()) {
    return BadDsn(dsn, "the semaphore store takes no address (semaphore or semaphore:?options)");
  }
  SemaphoreKeyScheme scheme = SemaphoreKeyScheme::kMd5;
  const std::optional<std::string> name = dsn.PeekOption("key_scheme");
  if (name == std::optional<std::string>("xxh3")) {
    scheme = SemaphoreKeyScheme::kXxh3;
  } else if (name && *name != "md5") {
    return BadDsn(dsn, absl::StrCat("key_scheme=", *name, ": expected md5 or xxh3"));
  }
  HeldLocks out;
  out.store = scheme == SemaphoreKeyScheme::kMd5 ? "semaphore" : "semaphore (key_scheme=xxh3)";
  std::optional<int32_t> only_key;
  if (request.resource) {
    absl::StatusOr<int32_t> key = SemaphoreIpcKey(*request.resource, scheme);
    if (!key.ok()) return key.status();
    only_key = *key;
  }
  absl::StatusOr<std::vector<SemaphoreSetInfo>> sets = ListSemaphoreSets();
  if (!sets.ok()) return sets.status();
  for (const SemaphoreSetInfo& set : *sets) {
    if (only_key && set.ipc_key != *only_key) continue;
    if (set.value >= set.permits) continue;  // not held
    HeldLock row;
    if (request.resource) row.resource = *request.resource;
    row.object = absl::StrFormat("key 0x%08x", static_cast<uint32_t>(set.ipc_key));
    row.mode = set.permits == 1 ? "exclusive" : "permit";
    // An acquisition takes its weight in permits, and the kernel gives a
    // dead holder's back (SEM_UNDO): the permits taken are the live
    // holders' weights added up.
    if (set.permits > 1) row.holders = set.permits - set.value;
    if (set.permits == 1 && set.last_op_time > 0) {
      row.since = set.last_op_time;
      row.since_source =
          "the set's last semop (sem_otime): the lock was taken then or before (a process "
          "that attaches to the set meanwhile moves it on)";
    }
    if (set.last_pid > 0) {
      row.pid = set.last_pid;
      row.command = ProcessCommandName(set.last_pid);
    }
    row.waiters = set.waiters;
    row.number_details.emplace_back("ipc_key", set.ipc_key);
    row.number_details.emplace_back("semid", set.semid);
    row.number_details.emplace_back("semval", set.value);
    row.number_details.emplace_back("permits", set.permits);
    row.text_details.emplace_back("layout", set.own_layout ? "ipclock" : "php");
    out.locks.push_back(std::move(row));
  }
  return out;
}

}  // namespace ipclock
