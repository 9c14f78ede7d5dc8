// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ListHeldSemaphore(): one counting semaphore seen from outside, read from
// where SemaphoreStoreFor() puts it. Built on ListHeldLocks(), so that every
// listable store shows its semaphores with nothing of its own: the SysV
// semaphore store's set is one row with the count; a slot semaphore's slots
// are ordinary locks, one row per slot held, grouped here by process.
//
// Caveat: the slots hold no limit. Slots at or above the limit asked for
// are not looked at, so a holder that uses a larger limit shows only by
// the slots below ours; the SysV set records its limit, and a different
// one asked for is reported.

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/dsn.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/store_factory.h"
#include "ipclock/stores/slot_semaphore_store.h"
#include "registry/store_registry.h"

namespace ipclock {
namespace {

constexpr uint32_t kMaxListedLimit = 32767;

std::optional<int64_t> NumberDetail(const HeldLock& row, absl::string_view name) {
  for (const auto& [key, value] : row.number_details) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::string TextDetail(const HeldLock& row, absl::string_view name) {
  for (const auto& [key, value] : row.text_details) {
    if (key == name) return value;
  }
  return "";
}

// The SysV set counts every holder's weight in one kernel count and
// records the limit; who holds is not kept (semctl tells the last pid).
void FromCountingSet(const HeldLocks& held, HeldSemaphore* out) {
  for (const HeldLock& row : held.locks) {
    const int64_t permits = NumberDetail(row, "permits").value_or(out->limit);
    const int64_t semval = NumberDetail(row, "semval").value_or(permits);
    if (permits != out->limit) {
      out->notes.push_back(absl::StrCat("the set of ", out->resource, " records limit ", permits,
                                        ", not ", out->limit, " as asked: shown with its own"));
      out->limit = permits;
    }
    out->in_use = std::max<int64_t>(0, permits - semval);
    out->last_pid = row.pid;
    out->waiters = row.waiters;
  }
  out->holders = std::nullopt;
}

// One holder per process of this host; a slot whose holder the store
// cannot tell (pid 0) is a holder of its own.
void AddSlot(const HeldLock& row, uint32_t slot, std::vector<SemaphoreHolder>* holders,
             std::map<std::tuple<pid_t, std::string>, size_t>* by_process) {
  const std::string host = TextDetail(row, "host");
  SemaphoreHolder* holder = nullptr;
  if (row.pid != 0) {
    auto [it, added] = by_process->try_emplace({row.pid, host}, holders->size());
    if (!added) holder = &(*holders)[it->second];
  }
  if (holder == nullptr) {
    holders->emplace_back();
    holder = &holders->back();
    holder->pid = row.pid;
    holder->command = row.command;
    holder->command_line = row.command_line;
    holder->unit = row.unit;
    holder->host = host;
    holder->fence = row.fence;  // slots come in ascending order
  }
  holder->weight += 1;
  holder->slots.push_back(slot);
  if (row.since && (!holder->since || *row.since < *holder->since)) {
    holder->since = row.since;
    holder->since_source = row.since_source;
  }
}

}  // namespace

absl::StatusOr<HeldSemaphore> ListHeldSemaphore(absl::string_view dsn_text,
                                                absl::string_view resource, uint32_t limit) {
  if (resource.empty()) {
    return absl::InvalidArgumentError("ipclock: a semaphore to list needs a resource name");
  }
  if (limit == 0 || limit > kMaxListedLimit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: semaphore ", resource, ": limit ", limit, " is not from 1 to 32767"));
  }
  absl::StatusOr<Dsn> dsn = Dsn::Parse(dsn_text);
  if (!dsn.ok()) return dsn.status();
  absl::StatusOr<Capabilities> caps = CheckStoreWithoutFallback(*dsn, StoreOptions());
  if (!caps.ok()) return caps.status();

  HeldSemaphore out;
  out.resource = std::string(resource);
  out.limit = limit;
  ListRequest request;
  if (caps->counting && caps->weighted) {
    request.resource = out.resource;
    absl::StatusOr<HeldLocks> held = ListHeldLocks(dsn_text, request);
    if (!held.ok()) return held.status();
    out.store = held->store;
    out.notes = held->skipped;
    FromCountingSet(*held, &out);
    return out;
  }
  std::vector<SemaphoreHolder> holders;
  std::map<std::tuple<pid_t, std::string>, size_t> by_process;
  std::set<pid_t> waiters_seen;
  for (uint32_t slot = 0; slot < limit; ++slot) {
    request.resource = SemaphoreSlotName(resource, slot);
    absl::StatusOr<HeldLocks> held = ListHeldLocks(dsn_text, request);
    if (!held.ok()) return held.status();
    out.store = held->store;
    out.notes.insert(out.notes.end(), held->skipped.begin(), held->skipped.end());
    bool dead = false;
    for (const HeldLock& row : held->locks) {
      if (row.resource != *request.resource) continue;
      for (const LockWaiter& w : row.waiter_list) {
        if (w.pid == 0 || waiters_seen.insert(w.pid).second) out.waiter_list.push_back(w);
      }
      if (row.mode == "holder died") {
        dead = true;
        continue;
      }
      AddSlot(row, slot, &holders, &by_process);
      ++out.in_use;
    }
    if (dead) out.dead_slots.push_back(slot);
  }
  out.holders = std::move(holders);
  return out;
}

}  // namespace ipclock
