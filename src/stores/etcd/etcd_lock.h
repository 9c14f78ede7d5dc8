// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The etcd store's class, shared by its files: etcd_store.cc (checks,
// renewals, releases, the factory) and etcd_queue.cc (acquisition: the
// concurrency.Mutex queue and the readers' variant). The contract is in
// include/ipclock/stores/etcd_store.h; the key layout in etcd_names.h.

#ifndef IPCLOCK_STORES_ETCD_LOCK_H_
#define IPCLOCK_STORES_ETCD_LOCK_H_

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ipclock/stores/etcd_store.h"
#include "ipclock/spi/store_interface.h"
#include "stores/etcd/etcd_client.h"
#include "stores/etcd/etcd_leases.h"
#include "stores/etcd/etcd_names.h"

namespace ipclock {

// What the store and `ipclock list` make of the options (etcd_dsn.cc):
// the client's settings (TLS files loaded), the prefix without '/' at
// either end, and the store as messages name it. InvalidArgument for bad
// options; the TLS files' errors; Unimplemented for etcds:// without TLS.
struct EtcdSetup {
  EtcdClientSettings client;
  std::string prefix;
  std::string describe;
};
absl::StatusOr<EtcdSetup> EtcdSetupOf(const EtcdStoreOptions& options);

// EtcdSetupOf() without loading the TLS files: the options' values, each
// endpoint's host, and each certificate file's type (core/named_file.h).
// The setup it returns has no TLS config.
absl::StatusOr<EtcdSetup> CheckEtcdOptions(const EtcdStoreOptions& options);

// What an EtcdStore can do.
Capabilities EtcdCapabilities();

// One acquisition's state.
struct EtcdKeyState final : KeyState {
  bool held = false;
  LockMode mode = LockMode::kExclusive;
  pid_t pid = 0;
  std::string record;     // the resource's record key (P)
  std::string key;        // our lock key
  int64_t revision = 0;   // its create revision: its identity
  // The revision at which it became the owner (etcd_queue.cc): the fence.
  int64_t owner_revision = 0;
  std::shared_ptr<EtcdLease> lease;
  std::string owner;      // exclusive: what we wrote in the record
  // The watch on the held key, once the watch on held locks asked for a
  // descriptor; `watch_fd` stays the descriptor number it was given, and a
  // watch opened again later is moved onto it.
  std::unique_ptr<EtcdWatch> watch;
  int watch_fd = -1;
  // Why the lock was lost, once known: later checks and the release say so.
  std::string lost;
};

// A release etcd did not confirm, tried again before the store's next
// requests: until then the key may be in the queue, and its lease keeps
// the resource's slot.
struct EtcdPendingRelease {
  std::shared_ptr<EtcdLease> lease;
  std::string record;
  std::string key;
  int64_t revision = 0;
  std::string owner;
  LockMode mode = LockMode::kExclusive;
  // Released as a holder that died would be (ReleaseAsDead()): the owner
  // record stays, marked, so that the next holder is told.
  bool died = false;
};

class EtcdStore final : public StoreWithRelease<EtcdKeyState> {
 public:
  EtcdStore(const EtcdStoreOptions& options, EtcdClientSettings client_settings,
            std::string describe);
  ~EtcdStore() override;

  absl::string_view name() const override { return "etcd"; }
  std::string Describe() const override { return describe_; }
  Capabilities capabilities() const override;

  // Grants the first lease (from NewEtcdStore).
  absl::Status Start();

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status Extend(Key& key, absl::Duration ttl) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;

  // For EtcdHeldKeyOf().
  std::optional<EtcdHeldKey> HeldKey(const Key& key) const;

 private:
  // Release() and ReleaseAsDead().
  absl::Status DoRelease(Key& key, bool died) override;

  // etcd_queue.cc
  // Takes the lock in `mode` for `key`, from nothing held.
  absl::StatusOr<bool> AcquireFromNothing(Key& key, LockMode mode, Deadline deadline);
  // Replaces a held lock by one of the other mode at the end of the queue.
  absl::StatusOr<bool> Convert(Key& key, LockMode mode, Deadline deadline);
  struct Queued {
    EtcdLockKeys keys;
    std::shared_ptr<EtcdLease> lease;
    std::string key;
    int64_t revision = 0;
    // The revision of the transaction that found it first in the queue.
    int64_t owner_revision = 0;
    LockMode mode = LockMode::kExclusive;
    std::string owner;
  };
  enum class Turn { kHeld, kBusy, kLostQueue };
  // The key `q` waits for.
  struct Blocker {
    std::string key;
    int64_t create_revision = 0;
  };
  // Waits until `q` holds the lock (recording an exclusive holder, and
  // whether the last one died), `deadline` passes or `key`'s wait is
  // cancelled (kBusy), or its key vanished. With `first`, waits for that
  // key's deletion before it looks. Held: `*owner_revision` is the revision
  // at which it found itself first.
  absl::StatusOr<Turn> WaitTurn(const Queued& q, const Key& key, Deadline deadline,
                                std::optional<Blocker> first, bool* died,
                                int64_t* owner_revision);
  // Sleeps until `blocker` (the key of that create revision) is deleted,
  // `deadline`, `cancel_fd` turns readable, or the watch fails, renewing
  // `lease` when due.
  void AwaitDeletion(const std::string& blocker, int64_t created, EtcdLease& lease,
                     Deadline deadline, int cancel_fd);
  // Puts the key of `q` in the queue (concurrency.Mutex's put-if-absent);
  // sets q->revision.
  absl::Status Enqueue(Queued* q, const Key& key, Deadline deadline);
  // Records the held lock in `key`; its expiry is `ttl` (the Lock's) from
  // now, or the lease's end if sooner.
  void Fill(Key& key, const Queued& q, absl::Duration ttl, bool died);

  // etcd_owner_death.cc
  // Whether the holder that left `record` behind (a record another holder
  // wrote, read in the transaction that made `q` the holder) held the lock
  // just before `q`: not if a writer of another client (etcdctl, Go) held
  // it in between. `acquired_at` is the revision of that transaction if it
  // wrote under the record's key or its queue, else 0. True when the
  // history cannot tell.
  bool DiedJustBefore(const EtcdKv& record, const Queued& q, int64_t acquired_at);
  // Whether one of `writers_gone` (keys of older writers, each with the
  // revision that deleted it) went after `dead_at` while its lease still
  // lives: a holder that released cleanly after the dead one.
  bool CleanWriterAfter(const std::vector<EtcdKv>& writers_gone, int64_t dead_at,
                        Deadline deadline);

  // etcd_store.cc
  // Deletes a key (and its record, if ours) that we may have written and
  // do not hold: now, or in the background if etcd does not confirm.
  void Abandon(EtcdPendingRelease release);
  // Sends the release transaction; OK once etcd confirmed it, with
  // `*was_there` saying whether the key was still ours.
  absl::Status SendRelease(const EtcdPendingRelease& r, Deadline deadline, bool* was_there);
  // Retries the releases etcd did not confirm.
  void RetryPendingReleases();
  absl::Status Failure(const absl::Status& s, absl::string_view resource,
                       absl::string_view what) const;
  // A lost lock: records why and returns Aborted.
  absl::Status Lost(Key& key, EtcdKeyState& st, std::string why);
  // Why our key vanished: its lease ended, or someone deleted it.
  std::string WhyGone(const EtcdKeyState& st);
  // The verdict on a lock etcd cannot be asked about: Unavailable while
  // the lease may live, Aborted once it may have expired.
  absl::Status Unreachable(Key& key, EtcdKeyState& st, const absl::Status& why);
  absl::Status CheckWatch(Key& key, EtcdKeyState& st);
  void ReopenWatch(EtcdKeyState& st);
  absl::Status NotOurs(const Key& key) const;
  // The state of a lock this process holds and has not found lost, or why
  // there is none: Aborted (not held, or lost: saying why), or
  // FailedPrecondition (the parent's lock, in a forked child).
  absl::StatusOr<EtcdKeyState*> LiveState(Key& key);
  Deadline RequestDeadline() const { return Deadline::In(options_.request_timeout); }
  // For a request about a held lock: `at_most` from now, and never past the
  // moment its lease may expire. A member that stops answering is not
  // waited on beyond it (the lock may be another's by then): the request
  // fails there, and Unreachable() says the lock is lost.
  static Deadline HeldDeadline(const EtcdLease& lease, absl::Duration at_most) {
    return Deadline::In(std::min(at_most, lease.KnownLife()));
  }

  const EtcdStoreOptions options_;
  const std::string describe_;
  const std::string prefix_;
  std::string owner_tag_;  // " ipclock host=H pid="
  EtcdClient client_;
  EtcdLeases leases_;

  std::mutex pending_mu_;
  std::vector<EtcdPendingRelease> pending_;  // guarded by pending_mu_
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ETCD_LOCK_H_
