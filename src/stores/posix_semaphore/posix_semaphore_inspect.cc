// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/posix_semaphore/posix_semaphore_inspect.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/store_errors.h"
#include "ipclock/stores/posix_semaphore_store.h"
#include "platform/dir_scan.h"
#include "platform/errors.h"
#include "platform/host_probe.h"
#include "platform/ipc_probe.h"
#include "platform/proc_pid.h"
#include "stores/posix_semaphore/posix_semaphore_registry.h"

namespace ipclock {

namespace {

constexpr absl::string_view kRegistrySuffix = ".reg";
constexpr size_t kHexDigits = 32;

// The store's rule for a prefix: it becomes part of a file name in /dev/shm.
bool ValidPrefix(absl::string_view prefix) {
  if (prefix.empty() || prefix.size() > 64) return false;
  for (char c : prefix) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// The semaphore names ("/<prefix>.<hex>") of every registry in /dev/shm.
absl::StatusOr<std::vector<std::string>> FindSemaphores(const std::string& prefix,
                                                        absl::string_view who) {
  const std::string head = absl::StrCat(prefix, ".");
  const auto semaphore_of = [&](absl::string_view name) -> std::optional<std::string> {
    if (!absl::ConsumePrefix(&name, head) || !absl::ConsumeSuffix(&name, kRegistrySuffix) ||
        name.size() != kHexDigits ||
        name.find_first_not_of("0123456789abcdef") != absl::string_view::npos) {
      return std::nullopt;
    }
    return absl::StrCat("/", head, name);
  };
  absl::StatusOr<DirListing> listing = ListRegularFiles(
      "/dev/shm", who, [&](absl::string_view name) { return semaphore_of(name).has_value(); });
  std::vector<std::string> out;
  if (absl::IsNotFound(listing.status())) return out;
  if (!listing.ok()) return listing.status();
  for (const DirFile& f : listing->files) out.push_back(*semaphore_of(f.name));
  return out;
}

}  // namespace

absl::StatusOr<HeldLocks> ListPosixSemaphoreLocks(Dsn& dsn, const ListRequest& request) {
  if (dsn.has_authority() || !dsn.path().empty()) {
    return BadDsn(dsn, "the posix-semaphore store takes no address "
                       "(posix-semaphore or posix-semaphore:?options)");
  }
  const std::string prefix = dsn.PeekOption("prefix").value_or("ipclock");
  if (!ValidPrefix(prefix)) {
    return BadDsn(dsn, "prefix must be 1 to 64 of [A-Za-z0-9._-]");
  }
  HeldLocks out;
  out.store = absl::StrCat("posix-semaphore (prefix=", prefix, ")");
  std::vector<std::string> semaphores;
  if (request.resource) {
    semaphores.push_back(PosixSemaphoreName(*request.resource, prefix));
  } else {
    absl::StatusOr<std::vector<std::string>> found = FindSemaphores(prefix, out.store);
    if (!found.ok()) return found.status();
    semaphores = *std::move(found);
  }
  for (const std::string& sem : semaphores) {
    const std::string registry = absl::StrCat(sem, kRegistrySuffix);
    // shm_open() of a FIFO planted under a registry's name would wait for a
    // writer for ever: anything but a regular file there is refused first.
    const std::string path = absl::StrCat("/dev/shm", registry);
    absl::Status unreadable;
    if (const PathInfo info = InspectPath(path, /*follow=*/false);
        info.error == 0 && !info.is_regular) {
      unreadable = ConfigurationError(
          out.store, "", absl::StrCat(path, " is not a regular file, so not a registry"));
    }
    absl::StatusOr<RegistrySnapshot> snap =
        unreadable.ok() ? ReadRegistrySnapshot(registry) : unreadable;
    if (!snap.ok()) {
      // Removed by its last user since we looked: nothing held there.
      if (absl::IsNotFound(snap.status())) continue;
      // The one registry asked for must be read. Among all of them, /dev/shm
      // is everyone's: a file of another program or of another ipclock
      // version named like a registry is left out, and said to be, rather
      // than hiding every other lock of the store.
      if (request.resource) return snap.status();
      out.skipped.push_back(std::string(snap.status().message()));
      continue;
    }
    const std::optional<int64_t> available = NamedSemaphoreValue(sem);
    // Pids of another pid namespace (a container) name other processes
    // here, or none: they are shown as recorded and never judged.
    const bool our_pids = snap->pid_namespace == PidNamespaceId();
    // The waiters of this resource: slots of live processes that say so.
    std::vector<LockWaiter> waiting;
    for (const RegistrySnapshot::Attached& a : snap->attached) {
      if (a.waiting_since == 0 || a.holding) continue;
      if (our_pids && ProcessIsGone(a.pid, a.start_time)) continue;
      LockWaiter w;
      w.pid = a.pid;
      if (our_pids) w.command = ProcessCommandName(a.pid);
      w.mode = snap->permits == 1 ? "exclusive" : "permit";
      w.since = a.waiting_since;
      waiting.push_back(std::move(w));
    }
    std::stable_sort(waiting.begin(), waiting.end(),
                     [](const LockWaiter& a, const LockWaiter& b) { return *a.since < *b.since; });
    for (const RegistrySnapshot::Attached& a : snap->attached) {
      if (!a.holding) continue;
      HeldLock row;
      if (request.resource) row.resource = *request.resource;
      row.object = absl::StrCat("/dev/shm", registry);
      if (!our_pids) row.text_details.emplace_back("pid_namespace", "another");
      const bool gone = our_pids && ProcessIsGone(a.pid, a.start_time);
      row.mode = gone ? "holder died" : snap->permits == 1 ? "exclusive" : "permit";
      row.pid = a.pid;
      if (our_pids && !gone) row.command = ProcessCommandName(a.pid);
      if (!gone && a.held_since > 0) {
        row.since = a.held_since;
        row.since_source = "written by the holder when it acquired";
      }
      row.waiter_list = waiting;
      row.waiters = static_cast<int64_t>(waiting.size());
      // Clock ticks since boot, as /proc/PID/stat has it: with the pid, it
      // tells this holder from a later process that reused its pid.
      row.number_details.emplace_back("start_time", static_cast<int64_t>(a.start_time));
      row.number_details.emplace_back("permits", snap->permits);
      if (available) row.number_details.emplace_back("available", *available);
      row.number_details.emplace_back("attached", static_cast<int64_t>(snap->attached.size()));
      out.locks.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace ipclock
