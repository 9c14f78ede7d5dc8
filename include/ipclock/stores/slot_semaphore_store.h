// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/slot_semaphore_store.h
// -----------------------------------------------------------------------------
//
// Counting semaphores on any store: at most N holders of a resource, each
// taking a weight of 1..N permits, all or none, built from N ordinary locks
// of another store, its slots. This is Symfony 8.1's semaphore on a lock
// store (`LockStore`), with its names: the slots of resource R with limit N
// are the locks `R_0` .. `R_{N-1}`, so any peer that takes lock `R_2` (a
// shell script with `ipclock run --key R_2`, or with flock(1) on that
// lock's file; a PHP LockStore semaphore) takes slot 2.
//
// Example:
//
//   absl::Status DownloadFirmware() {
//     absl::StatusOr<std::shared_ptr<ipclock::Store>> flock =
//         ipclock::StoreFromDsn("flock:///run/lock/gateway");
//     if (!flock.ok()) return flock.status();
//     ipclock::LockOptions options;
//     options.permits = 3;  // at most 3 downloads at once
//     options.weight = 1;   // this one takes one of them
//     absl::StatusOr<ipclock::Lock> permit = ipclock::Lock::Create(
//         ipclock::SemaphoreStoreFor(*flock), "firmware", options);
//     if (!permit.ok()) return permit.status();
//     absl::Status held = permit->Acquire(absl::Seconds(30));
//     if (!held.ok()) return held;  // DeadlineExceeded: 3 held all along
//     // permit->slots() is {K}: this process holds the lock "firmware_K".
//     return permit->Release();
//   }
//
// How an acquisition goes:
//
//   * A try takes `weight` free slots, looking from a random slot on, so
//     that holders spread over the slots; all of them or none: what it took
//     goes back when too few were free. It never waits on a slot.
//   * A wait of weight 1 tries again after a jittered backoff (1 ms doubling
//     to 50 ms), until the deadline: no slot's release wakes it, as no slot
//     is the one it waits for.
//   * A wait of weight W > 1 on a `blocking` slot store reserves: after one
//     try it takes slots 0, 1,
//     2, ... in that order, waiting on each (the slot store's own wait),
//     and keeps what it took, until it holds W. Weighted waiters all take
//     slots in the same order, so two never hold what the other waits for;
//     and the slots a heavy waiter has taken are not free to lighter ones,
//     so a stream of weight-1 holders cannot keep it out forever: each slot
//     it waits on comes to it when its holder lets go, as the slot store's
//     wait hands it over (in order on a `fair` store; on the others, the
//     waiter that the release wakes usually takes it before a newcomer's
//     try). It waits on a slot in slices (10 ms doubling to 200 ms), and
//     between them takes the rest of its weight from whichever slots are
//     free, if enough are, or none of them (it never waits holding those),
//     so a long holder of one slot does not hold it up while others are
//     free. At the deadline what it took goes back. On expiring slot
//     stores the slices are at most a third of the lease, and it extends
//     the slots it keeps between them.
//   * A wait of weight W > 1 on a polling slot store (Redis is native;
//     memcached, the table stores, combined) gathers: it tries every slot
//     it lacks as often as a weight-1 wait does (backoff from 1 ms, again
//     from 1 ms after each slot it gets) and keeps what it gets. Two such
//     waiters could each keep some and wait for the rest forever: one that
//     gets no slot within its slice (200 ms, doubling) gives back what it
//     kept and starts again, so that lighter holders, who cannot hold out
//     a doubling slice, do not keep it out.
//   * A try or wait that gives back a slot whose previous holder died
//     gives it back as a dead holder's (ReleaseAsDead), so that the death
//     is told to whoever takes that slot next.
//
// What each acquisition reports:
//
//   * `Lock::slots()`: the slots held, ascending (`ipclock run` gives them
//     to COMMAND in IPCLOCK_SLOTS).
//   * `previous_owner_died()`: some slot's previous holder died holding it,
//     on slot stores with `owner_death`: one of the permits was a dead
//     holder's.
//   * `fence()`: the fence of the lowest slot held, on slot stores with
//     `fencing`. Fences of different slots are not comparable: a fence
//     tells two holders of one slot apart.
//   * A refresh extends every slot's lease; a check (the watch on held
//     locks) checks every slot, and the loss of any slot loses the
//     semaphore (the permits were no longer all ours).
//
// The store's name() is "slot-semaphore"; Describe() is the slot store's
// with " (slot semaphore)" after it. Capabilities are the slot store's,
// plus `counting` and `weighted`, less
// `shared`, `serializable`, `fair` and `priority_inheritance`: a slot
// semaphore has no shared mode, is not handed between processes, and its
// order of service is the one above.
//
// Caveats. Every user of a resource must agree on its limit: a process
// that uses R with limit 2 sees only slots R_0 and R_1, and one with limit
// 3 takes R_2 too, so together they may hold 3 permits; nothing in the
// slots records the limit (the SysV semaphore store records and checks it:
// use it where all users are on one host). A slot lock is an ordinary lock
// of the slot store: an unrelated lock named R_0 takes a permit. A polling
// slot store hands a freed slot to whoever asks first: on a fast one (a
// combined store of flock dirs) weight-1 holders that ask again the moment
// they let go can keep a heavy waiter out for good.

#ifndef IPCLOCK_STORES_SLOT_SEMAPHORE_STORE_H_
#define IPCLOCK_STORES_SLOT_SEMAPHORE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "ipclock/store.h"

namespace ipclock {

// A store whose locks are semaphores of slot locks on `slots`. Null for a
// null `slots`.
std::shared_ptr<Store> NewSlotSemaphoreStore(std::shared_ptr<Store> slots);

// The store on which to make semaphores of any weight: the store's own
// semaphore layout where it has one (Redis: Symfony Semaphore's RedisStore
// layout, include/ipclock/stores/redis_store.h), `store` itself where it
// counts with weights natively (`counting` and `weighted`: the SysV
// semaphore store's one kernel count with SEM_UNDO), else a slot semaphore
// store over it. It does not depend on the weight, so that every holder of
// a resource counts in the same place: the POSIX semaphore and in-memory
// stores count natively only with weight 1 (`--permits`), and a semaphore
// of theirs made here uses slots, which their `--permits` locks do not see.
std::shared_ptr<Store> SemaphoreStoreFor(std::shared_ptr<Store> store);

// The name of slot `slot` of `resource`'s semaphore: "RESOURCE_SLOT", the
// lock that `ipclock list --limit` and peers look for.
std::string SemaphoreSlotName(absl::string_view resource, uint32_t slot);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_SLOT_SEMAPHORE_STORE_H_
