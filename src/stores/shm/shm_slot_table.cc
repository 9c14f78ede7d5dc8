// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/shm/shm_slot_table.h"

#include <errno.h>

#include <atomic>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/hashing.h"
#include "core/platform_deadline.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "platform/robust_mutex.h"

namespace ipclock {

namespace {

// A process holds table_mu only for a bounded scan. One that keeps it longer
// than this is stopped (SIGSTOP, a debugger) and a finite wait fails instead
// of hanging on it.
constexpr int64_t kTableGraceNanos = 1'000'000'000;
// How far past its home a new name looks for an index position that holds
// no name before it takes one whose name nobody has cached: far enough that a
// table below nine tenths full practically always has one, near enough that
// a table full of idle names is not scanned end to end for each new name.
constexpr uint32_t kFreeSlotWindow = 128;

// The home slot of a hash: the low half scaled to the capacity, so the tag
// (the high half) says something the home does not.
uint32_t Home(uint64_t hash, uint32_t capacity) {
  return static_cast<uint32_t>((static_cast<uint64_t>(static_cast<uint32_t>(hash)) * capacity) >> 32);
}

// The table hash: the same in every process that maps the segment (so not
// absl::Hash, which is seeded per process), and word-at-a-time, since a
// byte-wise FNV over a 200-byte name costs more than the rest of an
// acquisition. Collisions cost a longer probe, never a shared slot.
uint64_t NameHash(const uint64_t* words, uint32_t count, uint32_t stored_len) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  uint64_t h = 0xcbf29ce484222325ULL ^ (stored_len * kMul);
  for (uint32_t i = 0; i < count; ++i) {
    h = (h ^ words[i]) * kMul;
    h ^= h >> 29;
  }
  h *= kMul;
  h ^= h >> 32;
  return h;
}

enum class Seen { kMatch, kOther, kUnstable };

// Compares the binding of `slot` with `name` between two reads of its
// generation. kUnstable when a rebind was under way (or its binder died).
Seen Compare(const ShmSlot& slot, const ShmSlotName& name, uint64_t* generation) {
  // A sequence-lock read. The name fields are loaded with acquire (free on
  // x86), so the second load of the generation cannot move before them;
  // the rebind stores them with release after making the generation odd.
  const uint64_t g = slot.generation.load(std::memory_order_acquire);
  if ((g & 1) != 0) return Seen::kUnstable;
  bool same = slot.state.load(std::memory_order_acquire) == kShmSlotBound &&
              slot.name_hash.load(std::memory_order_acquire) == name.hash &&
              slot.name_kind.load(std::memory_order_acquire) == name.kind &&
              slot.name_len.load(std::memory_order_acquire) == name.len;
  for (uint32_t w = 0; same && w < name.words; ++w) {
    same = slot.name[w].load(std::memory_order_acquire) == name.word[w];
  }
  if (slot.generation.load(std::memory_order_relaxed) != g) return Seen::kUnstable;
  *generation = g;
  return same ? Seen::kMatch : Seen::kOther;
}

uint32_t Reach(const ShmSegment& segment) {
  // Written by other processes: a bound, checked before use.
  const uint32_t reach = segment.header().max_displacement.load(std::memory_order_relaxed);
  return reach < segment.capacity() ? reach : segment.capacity() - 1;
}

// The slot of an index entry, or the capacity for none (or nonsense).
uint32_t SlotOf(const ShmSegment& segment, uint64_t entry) {
  const uint32_t slot = ShmEntrySlotPlusOne(entry) - 1;
  return slot < segment.capacity() ? slot : segment.capacity();
}

bool Find(const ShmSegment& segment, const ShmSlotName& name, bool locked,
          ShmBinding* binding) {
  const uint32_t cap = segment.capacity();
  const uint32_t tag = ShmTag(name.hash);
  uint32_t i = Home(name.hash, cap);
  const uint32_t reach = Reach(segment);
  for (uint32_t d = 0; d <= reach; ++d, i = i + 1 == cap ? 0 : i + 1) {
    const uint64_t entry = segment.entry(i).load(std::memory_order_relaxed);
    if (ShmEntryTag(entry) != tag) continue;
    const uint32_t slot = SlotOf(segment, entry);
    if (slot == cap) continue;
    switch (Compare(segment.slot(slot), name, &binding->generation)) {
      case Seen::kMatch:
        binding->index = slot;
        return true;
      case Seen::kOther:
        break;
      case Seen::kUnstable:
        // Under table_mu nobody rebinds: an odd generation is a binder that
        // died, and such a slot holds no name. Without it, ask under it.
        if (!locked) return false;
        break;
    }
  }
  return false;
}

// After a holder of table_mu died: the one index entry its rebind may have
// left wrong, and the count of slots handed out (see the header). Called
// with table_mu held.
void RepairAfterDeath(ShmSegment& segment) {
  ShmHeader& h = segment.header();
  const uint32_t rebinding = h.rebinding;
  if (rebinding != 0 && rebinding <= segment.capacity()) {
    const uint32_t position = rebinding - 1;
    const uint64_t entry = segment.entry(position).load(std::memory_order_relaxed);
    const uint32_t slot = SlotOf(segment, entry);
    if (slot != segment.capacity()) {
      // The slot was handed to this position before the count moved on.
      if (h.next_unused <= slot) h.next_unused = slot + 1;
      const ShmSlot& s = segment.slot(slot);
      uint32_t tag = 0;
      if ((s.generation.load(std::memory_order_relaxed) & 1) == 0 &&
          s.state.load(std::memory_order_relaxed) == kShmSlotBound) {
        tag = ShmTag(s.name_hash.load(std::memory_order_relaxed));
      }
      segment.entry(position).store(ShmIndexEntry(tag, slot + 1), std::memory_order_relaxed);
    }
  }
  h.rebinding = 0;
}

enum class Rebind { kDone, kSkipped };

// Binds index position `position`, `displacement` places after the home of
// `name`, to `name` if nobody holds its slot; a position bound for the first
// time gets the next slot nobody has had. Called with table_mu held.
absl::StatusOr<Rebind> TryRebind(ShmSegment& segment, uint32_t position,
                                 uint32_t displacement, const ShmSlotName& name,
                                 absl::string_view resource) {
  ShmHeader& h = segment.header();
  const uint32_t cap = segment.capacity();
  uint32_t slot_index = SlotOf(segment, segment.entry(position).load(std::memory_order_relaxed));
  if (slot_index == cap) {
    // Positions and slots are as many, and each position takes one slot
    // once: there is always one left, unless someone wrote into the header.
    const uint32_t next = h.next_unused;
    if (next >= cap) return Rebind::kSkipped;
    // The entry first: a binder that dies before the count moves on leaves
    // `rebinding` pointing at it, and the repair moves the count.
    h.rebinding = position + 1;
    segment.entry(position).store(ShmIndexEntry(0, next + 1), std::memory_order_relaxed);
    h.next_unused = next + 1;
    h.rebinding = 0;
    slot_index = next;
  }
  ShmSlot& slot = segment.slot(slot_index);
  int rc = RobustMutexTryLock(&slot.mu);
  if (rc == EOWNERDEAD) {
    // Its holder died. If it was a holder of the lock, holder_pid is still
    // set and the slot is skipped below; if it was a binder, nothing in the
    // slot needs repair that the rebind does not redo.
    rc = RobustMutexMarkConsistent(&slot.mu);
    // Left held by this thread if that failed: unlocking would make the
    // mutex unrecoverable, while the kernel hands it on again, as an owner
    // death, when this thread exits.
    if (rc != 0) return Rebind::kSkipped;
  } else if (rc != 0) {
    return Rebind::kSkipped;  // held (EBUSY; EDEADLK if by this thread) or broken
  }
  const bool rebound = slot.holder_pid == 0;
  if (!rebound) {
    // The last holder died with the lock. The slot is kept for that
    // resource until its next holder has been told (holder_pid still set
    // is how it will learn); reusing it would lose the report.
  } else {
    // The order keeps a binder killed half-way harmless: `rebinding` first,
    // so the next holder of table_mu repairs this position's entry; the
    // fence floor next, so no fence is ever lost; the generation made odd,
    // so Keys that cached the old name cannot match and lookups without
    // table_mu retry; the slot marked bound, its generation even and its
    // tag set only once lookups reach that far (max_displacement), so a
    // bound name is never invisible (an invisible one would get a second
    // slot).
    h.rebinding = position + 1;
    const uint64_t fence = slot.fence;
    const uint64_t floor = h.fence_floor;
    if (fence > floor) h.fence_floor = fence;
    const uint64_t odd = (slot.generation.load(std::memory_order_relaxed) + 1) | 1;
    slot.generation.store(odd, std::memory_order_relaxed);
    segment.entry(position).store(ShmIndexEntry(0, slot_index + 1), std::memory_order_relaxed);
    // Release stores (free on x86): a lookup that reads any of them sees
    // the odd generation too (see Compare()).
    slot.state.store(kShmSlotFree, std::memory_order_release);
    slot.name_hash.store(name.hash, std::memory_order_release);
    slot.name_kind.store(name.kind, std::memory_order_release);
    slot.name_len.store(name.len, std::memory_order_release);
    for (uint32_t w = 0; w < name.words; ++w) {
      slot.name[w].store(name.word[w], std::memory_order_release);
    }
    slot.fence = fence > floor ? fence : floor;
    if (displacement > h.max_displacement.load(std::memory_order_relaxed)) {
      h.max_displacement.store(displacement, std::memory_order_relaxed);
    }
    slot.state.store(kShmSlotBound, std::memory_order_release);
    slot.generation.store(odd + 1, std::memory_order_release);
    segment.entry(position).store(ShmIndexEntry(ShmTag(name.hash), slot_index + 1),
                                  std::memory_order_relaxed);
    h.rebinding = 0;
  }
  if (int err = RobustMutexUnlock(&slot.mu); err != 0) {
    return ShmMutexError(segment, err, resource, "pthread_mutex_unlock (a slot being bound)");
  }
  return rebound ? Rebind::kDone : Rebind::kSkipped;
}

// Picks and binds a position and slot for `name`, which is bound nowhere.
// Called with table_mu held. The slot, or the capacity if every slot is
// held.
absl::StatusOr<uint32_t> BindSomewhere(ShmSegment& segment, const ShmSlotName& name,
                                       absl::string_view resource) {
  const uint32_t cap = segment.capacity();
  const uint32_t home = Home(name.hash, cap);
  // First a position that holds no name, near home; then one whose slot no
  // Key has cached; then any whose slot nobody holds, since a process
  // killed with a Key alive never gave its reference back and the count
  // alone would leak capacity.
  for (int pass = 0; pass < 3; ++pass) {
    const uint32_t span = pass == 0 && kFreeSlotWindow < cap ? kFreeSlotWindow : cap;
    uint32_t i = home;
    for (uint32_t d = 0; d < span; ++d, i = i + 1 == cap ? 0 : i + 1) {
      const uint64_t entry = segment.entry(i).load(std::memory_order_relaxed);
      const bool free = ShmEntryTag(entry) == 0;
      if (pass == 0 && !free) continue;
      if (pass == 1 && !free) {
        const uint32_t slot = SlotOf(segment, entry);
        if (slot == cap || segment.slot(slot).refs.load(std::memory_order_relaxed) != 0) {
          continue;
        }
      }
      absl::StatusOr<Rebind> r = TryRebind(segment, i, d, name, resource);
      if (!r.ok()) return r.status();
      if (*r == Rebind::kDone) {
        return SlotOf(segment, segment.entry(i).load(std::memory_order_relaxed));
      }
    }
  }
  return cap;
}

}  // namespace

void MakeShmSlotName(absl::string_view resource, ShmSlotName* out) {
  out->len = static_cast<uint32_t>(resource.size());
  Sha256Digest digest;
  const char* bytes = resource.data();
  size_t stored = resource.size();
  if (resource.size() <= kShmInlineName) {
    out->kind = kShmNameInline;
  } else {
    out->kind = kShmNameSha256;
    digest = Sha256(resource);
    bytes = reinterpret_cast<const char*>(digest.data());
    stored = digest.size();
  }
  out->words = static_cast<uint32_t>((stored + 7) / 8);
  if (out->words > 0) out->word[out->words - 1] = 0;
  memcpy(out->word, bytes, stored);
  out->hash = NameHash(out->word, out->words, static_cast<uint32_t>(stored));
}

bool FindShmBinding(const ShmSegment& segment, const ShmSlotName& name,
                    ShmBinding* binding) {
  return Find(segment, name, /*locked=*/false, binding);
}

absl::StatusOr<ShmBinding> ShmBindName(ShmSegment& segment, const ShmSlotName& name,
                                       Deadline deadline, absl::string_view resource) {
  ShmHeader& h = segment.header();
  Deadline table_deadline = deadline;
  if (!deadline.is_never()) {
    const absl::Duration grace = absl::Nanoseconds(kTableGraceNanos);
    if (deadline.Remaining() < grace) table_deadline = Deadline::In(grace);
  }
  int rc = RobustMutexLock(&h.table_mu, ForPlatform(table_deadline));
  if (rc == EOWNERDEAD) {
    // A process died holding table_mu: in a lookup (nothing to repair), or
    // in a rebind (one tag to repair; see the header). At worst a reference
    // count is one too high, which only makes the slot a later choice for
    // reuse.
    RepairAfterDeath(segment);
    rc = RobustMutexMarkConsistent(&h.table_mu);
    // If that failed, table_mu stays held by this thread rather than be
    // made unrecoverable: the kernel hands it on when the thread exits.
    if (rc != 0) return ShmMutexError(segment, rc, resource, "pthread_mutex_consistent (slot table)");
  } else if (rc == EBUSY) {
    return TransientError(segment.describe(), resource,
                          "the slot table stayed locked for over 1 s (is a process "
                          "using the segment stopped?)");
  } else if (rc != 0) {
    return ShmMutexError(segment, rc, resource, "locking the slot table");
  }

  ShmBinding binding;
  absl::Status failed;
  if (!Find(segment, name, /*locked=*/true, &binding)) {
    absl::StatusOr<uint32_t> bound = BindSomewhere(segment, name, resource);
    if (!bound.ok()) {
      failed = bound.status();
    } else if (*bound == segment.capacity()) {
      failed = OutOfResourcesError(
          segment.describe(), resource,
          absl::StrCat("all ", segment.capacity(), " slots of ", segment.path(),
                       " are held (or kept for holders that died until their "
                       "next holder is told); raise the `capacity` DSN option "
                       "(shm://NAME?capacity=N, up to ", kShmMaxCapacity,
                       "), which takes effect when the segment is created: "
                       "remove it first (rm ",
                       segment.path(), ") once no process uses it"));
    } else {
      binding.index = *bound;
      binding.generation =
          segment.slot(*bound).generation.load(std::memory_order_relaxed);
    }
  }
  if (failed.ok()) {
    segment.slot(binding.index).refs.fetch_add(1, std::memory_order_relaxed);
  }
  if (int err = RobustMutexUnlock(&h.table_mu); err != 0) {
    if (failed.ok()) segment.slot(binding.index).refs.fetch_sub(1, std::memory_order_relaxed);
    return ShmMutexError(segment, err, resource, "pthread_mutex_unlock (slot table)");
  }
  if (!failed.ok()) return failed;
  return binding;
}

absl::Status ShmMutexError(const ShmSegment& segment, int err, absl::string_view resource,
                           absl::string_view what) {
  if (err == ENOTRECOVERABLE) {
    // Only a process that unlocked an EOWNERDEAD mutex without making it
    // consistent leaves one here; ipclock never does, so some other program
    // wrote into the segment. Nobody can lock it again.
    return CorruptionError(segment.describe(), resource,
                           absl::StrCat(what, ": the mutex is unrecoverable (a "
                                        "process released it after its owner died "
                                        "without making it consistent); remove the "
                                        "segment (rm ", segment.path(),
                                        ") once no process uses it"));
  }
  return ErrnoError(err, segment.describe(), resource, what);
}

}  // namespace ipclock
