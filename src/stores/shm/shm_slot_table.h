// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// How a resource name finds its slot in a shm segment.
//
// The index is an open-addressed hash table with linear probing: a name
// hashes (ShmNameHash(), the same in every process) to a home position and
// is bound at most `max_displacement` positions after it. Each position
// holds a 32-bit tag of the hash and the number of its slot, in one 64-bit
// word, so that a probe reads 8 bytes of a dense array and touches a slot
// only when the tags match. A position gets its slot the first time a name
// is bound to it, the next one nobody has had: slots are laid out in the
// order names first arrived, so names that are used together tend to sit
// together (a program that goes through 100,000 resources in the order it
// first used them reads the slots front to back). A position keeps its slot
// when it is rebound to another name.
//
// Finding a bound name needs no lock (FindShmBinding): the slot's
// `generation` is a sequence count, odd while a rebind is under way, and a
// name read between two equal even counts was the slot's name at that
// count. Binding a name (ShmBindName) runs under the table-level robust
// mutex `table_mu`, looks again, and if the name is still unbound takes a
// position whose slot nobody holds. A slot may be rebound only by a
// process that holds both `table_mu` and the slot's mutex, and rebinding
// moves the generation on: so a Key that remembers (slot, generation) and
// finds the same generation after locking the slot's mutex holds that
// name's one and only slot, and one that finds another generation lets go
// and looks its name up again. That check, not the reference count, is
// what keeps two names from sharing a slot and one name from having two;
// the count only steers reuse toward slots that no Key has cached.
//
// The index is exact under table_mu: a binder that dies half-way leaves
// the position in the header's `rebinding`, and whoever next locks
// `table_mu` (EOWNERDEAD) recomputes that one entry from its slot, and the
// count of slots handed out, before it looks anything up.
//
// Cost. A lookup of a bound name reads one line of the index and the
// slot's two first cache lines; at a load of three quarters a probe
// sequence is one to three entries long. A name that is not bound costs a
// locked pass over up to max_displacement entries, and a full table a pass
// over every slot.

#ifndef IPCLOCK_STORES_SHM_SLOT_TABLE_H_
#define IPCLOCK_STORES_SHM_SLOT_TABLE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/spi/deadline.h"
#include "stores/shm/shm_mutex_store.h"
#include "stores/shm/shm_segment.h"

namespace ipclock {

// A resource as a slot stores it: names up to kShmInlineName bytes in
// full, longer ones as their SHA-256 (two distinct names then share a slot
// only if their digests collide).
struct ShmSlotName {
  uint64_t hash = 0;
  uint32_t kind = kShmNameInline;
  uint32_t len = 0;        // of the full name
  uint32_t words = 0;      // stored words in `word`
  uint64_t word[kShmNameWords] = {};
};

void MakeShmSlotName(absl::string_view resource, ShmSlotName* out);

// Where a name is bound: its slot, and the slot's generation then (even).
struct ShmBinding {
  uint32_t index = 0;
  uint64_t generation = 0;
};

// Looks `name` up without locking anything. True with `*binding` if a slot
// held it at that slot's generation; false if no slot did, or if a rebind
// was under way (ShmBindName then decides).
bool FindShmBinding(const ShmSegment& segment, const ShmSlotName& name,
                    ShmBinding* binding);

// Finds or binds the slot of `name` under table_mu, waiting for table_mu
// until `deadline` (at least a grace of one second, since a holder keeps
// it only for a scan), and counts one more Key referring to it.
// ResourceExhausted when every slot is held (or kept for a holder that
// died), naming `capacity`; Unavailable when table_mu stays locked.
absl::StatusOr<ShmBinding> ShmBindName(ShmSegment& segment, const ShmSlotName& name,
                                       Deadline deadline, absl::string_view resource);

// Error of a mutex call on `segment`: DataLoss for an unrecoverable mutex,
// the errno's status otherwise.
absl::Status ShmMutexError(const ShmSegment& segment, int err, absl::string_view resource,
                           absl::string_view what);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SHM_SLOT_TABLE_H_
