// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list` for the posix-semaphore store: the registries in /dev/shm
// ("<prefix>.<32 hex>.reg"), read through the store's ReadRegistrySnapshot(),
// and each semaphore's value. A registry slot marked holding is a holder;
// one whose process is gone holds a permit that the next attempt on the
// resource gives back. The resource itself is only a hash here, so it is
// named only when the caller gives it (--key).

#include <dirent.h>
#include <fcntl.h>
#include <semaphore.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ipclock/posix_semaphore_store.h"
#include "list_sources.h"
#include "platform/proc_pid.h"
#include "stores/posix_semaphore_registry.h"

namespace ipclock_cli {

namespace {

constexpr absl::string_view kRegistrySuffix = ".reg";
constexpr size_t kHexDigits = 32;

// The semaphore names ("/<prefix>.<hex>") of every registry in /dev/shm.
std::vector<std::string> FindSemaphores(const std::string& prefix) {
  std::vector<std::string> out;
  DIR* d = opendir("/dev/shm");
  if (d == nullptr) return out;
  const std::string head = absl::StrCat(prefix, ".");
  while (struct dirent* e = readdir(d)) {
    absl::string_view name = e->d_name;
    if (!absl::ConsumePrefix(&name, head) || !absl::ConsumeSuffix(&name, kRegistrySuffix) ||
        name.size() != kHexDigits ||
        name.find_first_not_of("0123456789abcdef") != absl::string_view::npos) {
      continue;
    }
    out.push_back(absl::StrCat("/", head, name));
  }
  closedir(d);
  return out;
}

// Permits free right now, or nullopt. sem_open without O_CREAT creates
// nothing.
std::optional<int64_t> SemaphoreValue(const std::string& name) {
  sem_t* sem = sem_open(name.c_str(), 0);
  if (sem == SEM_FAILED) return std::nullopt;
  int value = 0;
  const bool ok = sem_getvalue(sem, &value) == 0;
  sem_close(sem);
  return ok ? std::optional<int64_t>(value) : std::nullopt;
}

}  // namespace

absl::StatusOr<std::vector<LockRow>> ListPosixSemaphores(
    const std::optional<std::string>& key_resource, const std::string& prefix) {
  std::vector<std::string> semaphores;
  if (key_resource) {
    semaphores.push_back(ipclock::PosixSemaphoreName(*key_resource, prefix));
  } else {
    semaphores = FindSemaphores(prefix);
  }
  std::vector<LockRow> rows;
  for (const std::string& sem : semaphores) {
    const std::string registry = absl::StrCat(sem, kRegistrySuffix);
    absl::StatusOr<ipclock::RegistrySnapshot> snap =
        ipclock::ReadRegistrySnapshot(registry);
    if (!snap.ok()) {
      // Removed by its last user since we looked: nothing held there.
      if (snap.status().code() == absl::StatusCode::kNotFound) continue;
      return snap.status();
    }
    const std::optional<int64_t> available = SemaphoreValue(sem);
    // Pids of another pid namespace (a container) name other processes
    // here, or none: they are shown as recorded and never judged.
    const bool our_pids = snap->pid_namespace == ipclock::PidNamespaceId();
    for (const ipclock::RegistrySnapshot::Attached& a : snap->attached) {
      if (!a.holding) continue;
      LockRow row;
      if (key_resource) row.resource = *key_resource;
      row.object = absl::StrCat("/dev/shm", registry);
      if (!our_pids) row.text_details.emplace_back("pid_namespace", "another");
      const bool gone = our_pids && ipclock::ProcessIsGone(a.pid, a.start_time);
      row.mode = gone ? "holder died" : snap->permits == 1 ? "exclusive" : "permit";
      row.pid = a.pid;
      if (our_pids && !gone) row.command = CommandName(a.pid);
      // Clock ticks since boot, as /proc/PID/stat has it: with the pid, it
      // tells this holder from a later process that reused its pid.
      row.number_details.emplace_back("start_time", static_cast<int64_t>(a.start_time));
      row.number_details.emplace_back("permits", snap->permits);
      if (available) row.number_details.emplace_back("available", *available);
      row.number_details.emplace_back("attached",
                                      static_cast<int64_t>(snap->attached.size()));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace ipclock_cli
