// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: stores/combined_store.h
// -----------------------------------------------------------------------------
//
// Not needed by programs that build stores with `StoreFromDsn()`
// (store_factory.h), which takes the same options in the DSN: this is the
// store's typed factory, for building it in code, with the helpers that
// go with it. The comment below is the store's reference.
//
// A combined store holds one lock in several member stores at once and counts
// it as held when a strategy is met: `kConsensus` (a strict majority of the
// members) or `kUnanimous` (all of them). With three independent Redis
// servers and `kConsensus`, a lock survives the loss of any one server; with
// `kUnanimous`, any member that cannot be reached makes acquisition fail.
// This is Symfony Lock's CombinedStore with its rules:
//
//   * Members are tried in the order given. An acquisition stops as soon as
//     the strategy can no longer be met (too many members refused or
//     failed); it does not stop once the strategy is met, so that as many
//     members as possible hold the lock (a later member failure then costs
//     nothing).
//   * An error from a member counts as a failure of that member, never as
//     success (fail closed). Acquisition returns an error, not contention,
//     when the errors alone keep the strategy from being met.
//   * When the strategy is not met, whatever the members did take is released
//     before Acquire returns, so a failed try holds nothing anywhere.
//   * `Exists` asks members until the strategy is met or can no longer be.
//   * A refresh goes to every member that holds the key; if it does not reach
//     enough of them, the lock is released on all and the refresh fails.
//   * `Lock::CheckAcquired()` (and the watch on held locks) asks every
//     member that holds the key. The lock is lost (Aborted, naming each
//     member's loss) once the members that lost their part leave the
//     strategy unmet even if every member that could not be asked still
//     holds its part; while that cannot be told, the check is Unavailable
//     (and the watch goes by the lease). The watch polls every member's
//     descriptors, so a member that reports a loss at once (a PostgreSQL
//     session's socket) triggers the check at once.
//   * One slow member never holds up a loss that the others prove. Local
//     members are asked first, and when their answers already rule the
//     strategy out (the deleted lock file of a unanimous flock + Redis
//     lock) the remote members are not asked. Otherwise, with more than one
//     member to ask, each remote member is asked on a thread of its own,
//     all at once; the verdict comes as soon as the answers decide it, and
//     while it waits for a server the local members are asked again every
//     50 ms. A check of a server that has not answered when the loss is
//     told goes on alone: the next call on the key waits for it, except a
//     release, which leaves that member's part to it (released if its
//     server answers, else ended by its lease or session). The watch checks
//     such a lock on a thread of the store's own, so that a stopped server
//     delays no other lock's check. What a stopped server still delays is a
//     release that has to ask it: by that member's own timeouts.
//   * A release is OK when the members that released meet the strategy,
//     even if another member had lost its part meanwhile; when they do not,
//     and some member found its part lost, it is Aborted ("the lock was no
//     longer held at release").
//
// Capabilities are what every member can honour:
//
//   blocking      never: a wait polls the members (1 ms doubling to 50 ms,
//                 with jitter so that two waiters do not stay in step) until
//                 the deadline. No member can wake a waiter for the others.
//   expiring      if any member's locks expire. The key's single lease is
//                 given to every member, so the shortest is what counts, and
//                 a refresh goes to all.
//   shared        if every member has shared locks.
//   serializable  if every member is serializable.
//   owner_death   never declared, though reported: a key's
//                 `previous_owner_died()` is true when any member that it
//                 acquired says so. That errs towards reporting: a member
//                 the previous combined holder never took (a majority need
//                 not include it) may report the death of an older holder of
//                 that member alone, so a clean release can still be followed
//                 by a report. Treat it as "check your data", not as proof.
//   scope         the narrowest member's: a majority of members that are
//                 each local to one host excludes only processes of that
//                 host.
//   fencing, counting: never. Members count their fences apart, and a
//                 majority is a different subset of members from one
//                 acquisition to the next, so no number drawn from them grows
//                 for sure; permits are not additive over a majority either.
//
// Each member keeps its own per-key state in the `Key` (keyed by the member's
// address), so two members of the same kind (two flock dirs, two Redis
// servers) coexist. The same store object may appear only once.
//
// DSN (doc/stores.md, "combined"):
//
//   combined:?strategy=consensus&store1=DSN&store2=DSN&store3=DSN
//
// Members are `store1`, `store2`, ... with no gaps. Their DSNs are
// percent-decoded like every query value: a member DSN that has options of
// its own writes its `&` as `%26` (and a `%` as `%25`). A member whose server
// is down when the DSN is built (Unavailable) does not stop the build if the
// other members meet the strategy: it counts as refusing, and building it is
// retried on use, at most once a second. Its capabilities are those its
// DSN gives it, as CheckDsn() (store_factory.h) reads them.

#ifndef IPCLOCK_COMBINED_STORE_H_
#define IPCLOCK_COMBINED_STORE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ipclock/store.h"

namespace ipclock {

enum class CombineStrategy {
  kConsensus,  // strictly more than half of the members
  kUnanimous,  // every member
};

// Combines `members` (tried in this order) under `strategy`. InvalidArgument
// if there are none, if one is null, or if one appears twice.
absl::StatusOr<std::shared_ptr<Store>> NewCombinedStore(
    std::vector<std::shared_ptr<Store>> members, CombineStrategy strategy);

}  // namespace ipclock

#endif  // IPCLOCK_COMBINED_STORE_H_
