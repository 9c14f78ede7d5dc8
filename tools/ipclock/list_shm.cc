// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list` for shm://NAME: the slot table, read through the store's
// read-only ListShmSlots(). A slot is held when its holder pid is set and
// that process is alive; the mutex itself is never tried, since a trylock
// that succeeded would make us a holder, and one taken from a dead holder
// would use up the owner-death report meant for the next real holder.

#include "absl/strings/str_cat.h"
#include "ipclock/shm_store.h"
#include "list_sources.h"

namespace ipclock_cli {

absl::StatusOr<std::vector<LockRow>> ListShmSegment(const std::string& name) {
  absl::StatusOr<std::vector<ipclock::ShmSlotInfo>> slots = ipclock::ListShmSlots(name);
  if (!slots.ok()) {
    // No segment: nobody has used the store since it was last removed.
    if (slots.status().code() == absl::StatusCode::kNotFound) {
      return std::vector<LockRow>();
    }
    return slots.status();
  }
  std::vector<LockRow> rows;
  for (const ipclock::ShmSlotInfo& slot : *slots) {
    if (slot.holder_pid == 0) continue;
    LockRow row;
    row.resource = slot.name;
    row.object = absl::StrCat("slot ", slot.index);
    row.mode = slot.holder_alive ? "exclusive" : "holder died";
    row.pid = slot.holder_pid;
    if (slot.holder_alive) row.command = CommandName(slot.holder_pid);
    row.fence = static_cast<int64_t>(slot.fence);
    row.number_details.emplace_back("refcount", slot.refs);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ipclock_cli
