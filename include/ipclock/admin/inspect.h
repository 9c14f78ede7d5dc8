// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: admin/inspect.h
// -----------------------------------------------------------------------------
//
// For tools that inspect or check a host, as the `ipclock` CLI does; programs
// that only take locks do not need it.
//
// Looking at stores from outside, as `ipclock list` does: which stores this
// build has, and which locks are held in one now. Nothing here takes, tries
// or creates anything (a probe would itself be a holder for an instant, and
// listing a store that does not exist yet lists nothing).

#ifndef IPCLOCK_ADMIN_INSPECT_H_
#define IPCLOCK_ADMIN_INSPECT_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "ipclock/metrics.h"
#include "ipclock/store.h"

namespace ipclock {

// One store kind, as the registry of stores knows it.
struct StoreInfo {
  // The canonical DSN scheme: "flock", "shm", "redis", ...
  std::string name;
  // Every scheme that names it (aliases included).
  std::vector<std::string> schemes;
  Scope scope = Scope::kLocal;
  // Whether this build has it; if not, `feature` is the Meson feature
  // option that builds it.
  bool built = false;
  std::string feature;
  // Whether `ListHeldLocks()` can list its locks.
  bool listable = false;
};

// Every store kind, built or not, in the registry's order.
std::vector<StoreInfo> KnownStores();

// A process waiting for a lock, where the store can tell who.
struct LockWaiter {
  pid_t pid = 0;
  std::string command;  // /proc/PID/comm; empty when unknown or gone
  std::string unit;     // its systemd unit, as `HeldLock::unit`
  std::string mode;     // "exclusive" or "shared"; empty when unknown
  // When it began to wait (Unix seconds), where the store keeps it; see
  // `HeldLock::waiter_list` for which do.
  std::optional<int64_t> since;
};

// One holder of one lock (a shared lock held by three processes is three
// entries), or a lock whose holder died and whose next holder will be told.
struct HeldLock {
  // The resource as far as the store can tell: the name, the readable part
  // of a lock file name, or empty where only a hash is kept.
  std::string resource;
  // Where the lock lives: a file name, a slot, a semaphore set, a key.
  std::string object;
  // What names the lock in its store: the same for each of its holders,
  // from one holder to the next, and whether or not the resource was asked
  // for. The lock file's name (flock), the slot's name (shm), the set's key
  // (semaphore), the registry (posix-semaphore), the resource's key or node
  // (etcd, ZooKeeper), the server's lock name (MySQL); `object` where a
  // store leaves it empty.
  std::string lock;
  // "exclusive", "shared", "permit" (counting stores), or "holder died".
  std::string mode;
  // How many holders this one entry stands for, where the store keeps only
  // a count (a SysV set of several permits: the permits taken, which are
  // its holders' weights added up); nullopt: one.
  std::optional<int64_t> holders;
  pid_t pid = 0;        // 0: unknown (or on another host)
  std::string command;  // /proc/PID/comm; empty when unknown or gone
  // Filled wherever `command` is (a live process of this host): its
  // /proc/PID/cmdline (arguments joined by spaces, cut at 4 KiB), its cgroup
  // (/proc/PID/cgroup: the unified hierarchy's path, or systemd's v1 one on
  // hybrid hosts) and its systemd unit (the cgroup path's last component
  // ending in ".service" or ".scope"; empty outside any).
  std::string command_line;
  std::string cgroup;
  std::string unit;
  std::optional<int64_t> since;  // Unix seconds
  // How `since` is known, for the reader to weigh it.
  std::string since_source;
  std::optional<int64_t> fence;
  // How many wait for the lock: counted from `waiter_list` where the store
  // names its waiters, or the store's count where it keeps only one (SysV
  // semaphores); nullopt where it cannot tell (a robust mutex knows only
  // that someone waits).
  std::optional<int64_t> waiters;
  // The waiters the store can name, oldest first where it knows since when:
  // flock, the blocked entries of /proc/locks (the "->" lines, in the
  // kernel's order, without a time), then those queued in the lock file by
  // `fair=true` stores, in the queue's order; shm, the waits ipclock
  // processes mark on the segment; posix-semaphore, the registry's slots
  // that wait; both with the time each began to wait.
  std::vector<LockWaiter> waiter_list;
  // Store-specific facts, as name and value; numbers stay numbers in JSON.
  std::vector<std::pair<std::string, std::string>> text_details;
  std::vector<std::pair<std::string, int64_t>> number_details;
};

struct ListRequest {
  // List only this resource's lock, named. Stores that keep only a hash of
  // each name (the semaphore stores) can name a lock only when asked for it;
  // the others show every name anyway.
  std::optional<std::string> resource;
};

struct HeldLocks {
  // The store that was listed, for messages: its DSN with defaults filled in
  // (e.g. "flock:///run/lock/ipclock" for "flock").
  std::string store;
  std::vector<HeldLock> locks;
  // What the listing left out because it could not be read, one line each
  // naming the object and why (a file of another program or version named
  // like a posix-semaphore registry): one such file does not hide every
  // other lock of the store. `ipclock list` prints each on stderr.
  std::vector<std::string> skipped;
};

// The locks held now in the store `dsn` names. Nothing is created: a store
// that does not exist yet (no lock dir, no segment) holds no locks.
// InvalidArgument for a bad DSN; Unimplemented for a store that cannot be
// listed from outside (`StoreInfo::listable` is false: a remote or
// in-memory store, or one this build left out); the store's error
// otherwise (e.g. PermissionDenied for a lock dir we may not read).
absl::StatusOr<HeldLocks> ListHeldLocks(absl::string_view dsn,
                                        const ListRequest& request = ListRequest());

// One process's permits of a semaphore, as ListHeldSemaphore() groups
// them from the slots it holds.
struct SemaphoreHolder {
  // As in HeldLock: 0 where the store cannot tell (a holder on another
  // host), and then each slot is a holder of its own.
  pid_t pid = 0;
  std::string command;
  std::string command_line;
  std::string unit;
  std::string host;  // where the store records it (etcd, ZooKeeper)
  // The permits it holds: its slots, or its number of slot rows.
  int64_t weight = 0;
  // Its slots, ascending (a slot semaphore's R_K are slot K).
  std::vector<uint32_t> slots;
  // Since when it holds its first slot, and how that is known.
  std::optional<int64_t> since;
  std::string since_source;
  // The fence of its lowest slot, as Lock::fence() reports it.
  std::optional<int64_t> fence;
};

// A counting semaphore now (a Lock of `LockOptions::permits` N made on
// SemaphoreStoreFor()): its limit, the permits taken, by whom.
struct HeldSemaphore {
  std::string store;  // as HeldLocks::store
  std::string resource;
  // The limit: the one asked for, or the one the store records (the SysV
  // semaphore store keeps it in the set; `notes` says when they differ).
  int64_t limit = 0;
  // Permits taken now: held, or kept by a waiter of weight > 1 that takes
  // them one at a time (such a waiter shows as a holder of what it kept).
  int64_t in_use = 0;
  // The holders by process; nullopt where the store keeps only a count
  // (the SysV set: the kernel tells how many permits are taken, not by
  // whom; `last_pid` is the last process to take or give one).
  std::optional<std::vector<SemaphoreHolder>> holders;
  pid_t last_pid = 0;
  // Slots whose holder died holding them: free again, and the next to take
  // one is told (previous_owner_died()).
  std::vector<uint32_t> dead_slots;
  // How many wait, where the store counts them (the SysV set: GETNCNT);
  // nullopt on slot semaphores, whose waits of weight 1 poll rather than
  // queue on any one slot and so are seen by no store.
  std::optional<int64_t> waiters;
  // The waiters the store can name: on slot semaphores, those queued on a
  // slot (a waiter of weight > 1 on a blocking store waits on each slot it
  // lacks in turn), as HeldLock::waiter_list.
  std::vector<LockWaiter> waiter_list;
  // Warnings, one line each: a recorded limit other than the one asked
  // for, objects the listing left out (HeldLocks::skipped).
  std::vector<std::string> notes;
};

// The semaphore `resource` of limit `limit` in the store `dsn` names, as
// SemaphoreStoreFor() lays it out there: the SysV semaphore store's set,
// or the slot locks RESOURCE_0 .. RESOURCE_{limit-1}
// (stores/slot_semaphore_store.h). Reads only, as ListHeldLocks() does,
// and fails as it does; InvalidArgument for an empty resource or a limit
// of 0 or above 32767. Redis's semaphores (Symfony's layout) cannot be
// listed from outside, as its locks cannot.
absl::StatusOr<HeldSemaphore> ListHeldSemaphore(absl::string_view dsn, absl::string_view resource,
                                                uint32_t limit);

// One store's part of a listing for Prometheus (ListingsToOpenMetrics()).
struct StoreListing {
  // The store as given (`ipclock list --store`): its `store` label, with
  // passwords and secrets written "***" as messages write them.
  std::string dsn;
  // Its locks now; nullptr when the listing failed.
  const HeldLocks* held = nullptr;
  // When the listing failed: the samples of its last good listing, as
  // KeptSamples() read them back from the text written then, shown again
  // as they were (ipclock_list_last_success_timestamp_seconds says when).
  std::vector<std::string> kept;
};

// The text form of `stores` for Prometheus (`ipclock list
// --format=openmetrics`, for node_exporter's textfile collector): one
// exposition whatever the number of stores, valid as OpenMetrics and as
// the Prometheus text format (gauges only; `# EOF` last, which the latter
// reads as a comment). What one look from outside can see now, never
// counters (those are in each process, metrics.h). Every series carries
// `store`; a lock's carry `lock` (HeldLock::lock) and `resource` (empty
// where the store cannot name it), so that each lock is one series,
// whoever holds it:
//
//   ipclock_list_success{store}                          1, or 0 if it failed
//   ipclock_list_last_success_timestamp_seconds{store}   when it last listed
//   ipclock_lock_holders{store,lock,resource}            live holders
//   ipclock_lock_holder_info{store,lock,resource,mode,pid,command,unit,host} 1
//   ipclock_lock_held_seconds{store,lock,resource}       the longest hold
//   ipclock_lock_waiters{store,lock,resource}            where known
//   ipclock_lock_longest_wait_seconds{store,lock,resource}
//   ipclock_lock_fence{store,lock,resource}              where known
//
// Who holds is in the info gauge alone (one series per holder, 1), so
// that a new holder does not start new series of the others. `now` is the
// time held and waited seconds are measured to, and the listing's time.
std::string ListingsToOpenMetrics(absl::Span<const StoreListing> stores, absl::Time now,
                                  MetricsTextFormat format = MetricsTextFormat::kOpenMetrics);

// The sample lines of `text`, an earlier ListingsToOpenMetrics() output,
// that belong to store `dsn` (its label written as that function writes
// it), but for ipclock_list_success: what StoreListing::kept takes. Lines
// of families this version does not write, or that do not read as one of
// its samples (a file edited by hand), are left out.
std::vector<std::string> KeptSamples(absl::string_view text, absl::string_view dsn);

// The store kind that `dsn` names, whether or not this build has it.
// InvalidArgument for a malformed DSN or an unknown scheme.
absl::StatusOr<StoreInfo> FindStore(absl::string_view dsn);

}  // namespace ipclock

#endif  // IPCLOCK_ADMIN_INSPECT_H_
