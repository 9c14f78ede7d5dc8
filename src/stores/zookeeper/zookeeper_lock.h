// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The ZooKeeper store's class, shared by its files: zookeeper_store.cc (the
// session, checks, the symfony format, the factory) and zookeeper_recipe.cc
// (the lock recipe). The contract is in include/ipclock/stores/zookeeper_store.h.

#ifndef IPCLOCK_STORES_ZOOKEEPER_LOCK_H_
#define IPCLOCK_STORES_ZOOKEEPER_LOCK_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "core/key_naming.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/stores/zookeeper_store.h"
#include "stores/zookeeper/zookeeper_names.h"
#include "stores/zookeeper/zookeeper_session.h"

namespace ipclock {

// One acquisition's state: the session that holds its node, and the node.
struct ZkKeyState final : KeyState {
  ~ZkKeyState() override;
  // Stops ringing `bell` for this node.
  void Unregister();

  std::shared_ptr<ZkSession> session;
  bool held = false;
  LockMode mode = LockMode::kExclusive;
  std::string parent;  // recipe: the resource node; symfony: the base path
  std::string node;    // the lock node's path
  int64_t czxid = 0;   // its creation zxid: the fence, and its identity
  // Recipe, exclusive: the version of the "owner" record we wrote.
  int owner_version = -1;
  // Rung by the session's events and the node's deletion; made when the
  // watch on held locks asks for its descriptor.
  std::shared_ptr<ZkBell> bell;
};

class ZooKeeperStore final : public StoreWithRelease<ZkKeyState> {
 public:
  ZooKeeperStore(const ZooKeeperStoreOptions& options, KeyNaming naming);

  absl::string_view name() const override { return "zookeeper"; }
  std::string Describe() const override { return describe_; }
  Capabilities capabilities() const override;

  // Opens the first session and makes the base path (from NewZooKeeperStore).
  absl::Status Start();
  void WarnIfNoSecret() const { ipclock::WarnIfNoSecret(naming_, describe_); }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  // Delete() and ReleaseAsDead(): `died` leaves the recipe's owner record, as
  // a holder whose session ended would.
  absl::Status DoRelease(Key& key, bool died) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  WatchTargets GetWatchTargets(Key& key) override;

 private:
  bool symfony() const { return options_.format == ZooKeeperStoreOptions::Format::kSymfony; }

  // The session for new requests: a new one after an expiry or a fork.
  absl::StatusOr<std::shared_ptr<ZkSession>> CurrentSession();
  // Whether a new acquisition's request failed because the servers had
  // expired `session` before its client heard of it (it hears a moment
  // later): then the next CurrentSession() opens a new one and the
  // acquisition tries again at once, even past its deadline (a try-lock
  // runs with a deadline already passed), at most kMaxExpiredRetries
  // times. Nothing can have been created: an expired session's creates
  // are refused, and its ephemeral nodes are gone.
  bool RetryOnExpiredSession(const ZkResult& r, const std::shared_ptr<ZkSession>& session,
                             int* retries);
  static constexpr int kMaxExpiredRetries = 2;
  // Creates the missing nodes of `path` (persistent), its last one as
  // `last_mode`.
  absl::Status EnsurePath(ZkSession& session, const std::string& path, int last_mode,
                          absl::string_view resource);
  // A status for a ZooKeeper result.
  absl::Status Failure(const ZkResult& r, absl::string_view resource,
                       absl::string_view what) const;
  // The lock's state as the session knows it without asking the servers:
  // Aborted once the session expired (or may have), Unavailable while
  // disconnected, OK while connected.
  absl::Status SessionVerdict(const ZkKeyState& st, absl::string_view resource) const;
  // A release the servers did not answer (`rc`), whose delete the session
  // retries: Aborted if the session's verdict is, else Unavailable saying so.
  absl::Status UnansweredRelease(const ZkKeyState& st, absl::string_view resource, int rc) const;
  absl::Duration CallWait(const ZkSession& session) const { return session.timeout(); }

  // zookeeper_recipe.cc
  absl::StatusOr<bool> SaveRecipe(Key& key, LockMode mode, Deadline deadline);
  absl::Status DeleteRecipe(Key& key, ZkKeyState& st, bool died);
  // Queues `me` and waits until it holds the lock, `deadline` passes or
  // `key`'s wait is cancelled; on false or an error the node is deleted.
  absl::StatusOr<bool> WaitInQueue(ZkSession& session, const std::string& parent,
                                   const LockChild& me, const Key& key, Deadline deadline,
                                   bool* owner_left);
  // Records an exclusive holder in "owner"; its version, or an error.
  absl::StatusOr<int> RecordOwner(ZkSession& session, const std::string& parent,
                                  const std::string& me, bool left_behind,
                                  absl::string_view resource);

  // zookeeper_store.cc, symfony format
  absl::StatusOr<bool> SaveSymfony(Key& key, Deadline deadline);
  absl::Status DeleteSymfony(Key& key, ZkKeyState& st);

  // The node name of `resource` (recipe: the resource node; symfony: the
  // lock node), or InvalidArgument.
  absl::StatusOr<std::string> NodeName(absl::string_view resource) const;
  std::string Child(const std::string& parent, absl::string_view name) const;

  const ZooKeeperStoreOptions options_;
  const KeyNaming naming_;
  std::string base_;      // the path, without a trailing '/' ("" for the root)
  std::string describe_;
  std::string node_data_;  // what recipe lock nodes hold: who made them

  std::mutex mu_;
  std::shared_ptr<ZkSession> session_;  // guarded by mu_
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ZOOKEEPER_LOCK_H_
