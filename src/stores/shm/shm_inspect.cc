// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/shm/shm_inspect.h"

#include "absl/strings/str_cat.h"
#include "core/hashing.h"
#include "core/store_errors.h"
#include "ipclock/stores/shm_store.h"
#include "platform/errors.h"
#include "platform/host_probe.h"
#include "platform/proc_pid.h"
#include "stores/shm/shm_mutex_store.h"

namespace ipclock {

namespace {

// How ListShmSlots() names a slot of `resource`: the name, or the digest of
// one too long to keep whole.
std::string SlotNameOf(absl::string_view resource) {
  if (resource.size() <= kShmInlineName) return std::string(resource);
  return absl::StrCat("sha256:", ToHex(Sha256(resource)));
}

}  // namespace

absl::StatusOr<HeldLocks> ListShmLocks(Dsn& dsn, const ListRequest& request) {
  if (!dsn.has_authority() || dsn.host().empty() || !dsn.user().empty() ||
      dsn.has_password() || dsn.port() != 0 || !dsn.path().empty()) {
    return BadDsn(dsn, "expected shm://NAME with NAME of [A-Za-z0-9._-]{1,200}");
  }
  HeldLocks out;
  out.store = absl::StrCat("shm://", dsn.host());
  // shm_open() of a FIFO planted under the segment's name would wait for a
  // writer for ever: anything but a regular file there is refused first.
  const std::string path = absl::StrCat("/dev/shm/ipclock.", dsn.host());
  if (const PathInfo info = InspectPath(path, /*follow=*/false);
      info.error == 0 && !info.is_regular) {
    return ConfigurationError(out.store, "",
                              absl::StrCat(path, " is not a regular file, so not a segment"));
  }
  absl::StatusOr<std::vector<ShmSlotInfo>> slots = ListShmSlots(dsn.host());
  if (!slots.ok()) {
    // No segment: nobody has used the store since it was last removed.
    if (absl::IsNotFound(slots.status())) return out;
    return slots.status();
  }
  const std::optional<std::string> only =
      request.resource ? std::optional<std::string>(SlotNameOf(*request.resource))
                       : std::nullopt;
  for (const ShmSlotInfo& slot : *slots) {
    if (slot.holder_pid == 0) continue;
    if (only && slot.name != *only) continue;
    HeldLock row;
    row.resource = request.resource ? *request.resource : slot.name;
    row.object = absl::StrCat("slot ", slot.index);
    // A slot may be bound to another name later; the name is the lock.
    row.lock = slot.name;
    row.mode = slot.holder_alive ? "exclusive" : "holder died";
    row.pid = slot.holder_pid;
    if (slot.holder_alive) row.command = ProcessCommandName(slot.holder_pid);
    row.fence = static_cast<int64_t>(slot.fence);
    if (slot.holder_alive && slot.held_since > 0) {
      row.since = slot.held_since;
      row.since_source = "written by the holder when it acquired";
    }
    for (const ShmSlotInfo::Waiter& w : slot.waiters) {
      LockWaiter waiter;
      waiter.pid = w.pid;
      waiter.command = ProcessCommandName(w.pid);
      waiter.mode = "exclusive";
      waiter.since = w.since;
      row.waiter_list.push_back(std::move(waiter));
    }
    row.waiters = static_cast<int64_t>(row.waiter_list.size());
    row.number_details.emplace_back("refcount", slot.refs);
    out.locks.push_back(std::move(row));
  }
  return out;
}

}  // namespace ipclock
