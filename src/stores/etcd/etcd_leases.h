// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The leases of one etcd store in one process (include/ipclock/stores/etcd_store.h,
// "Leases"). concurrency.Mutex names an exclusive lock's key after its
// lease, so one lease can hold one exclusive key per resource: a second
// Lock of this process on a resource takes the next lease that has none
// for it, and a lease is granted when none is free. Shared locks' keys are
// unique and all go on the first lease.
//
// What is known of a lease here: when the newest request that etcd
// answered about it (the grant, a keep-alive) was sent. etcd set its
// expiry no earlier than that plus its TTL (a new leader only extends
// leases), so until then the lease lives; after it, it may be gone
// (`EarliestExpiryNanos()`).
//
// fork(): a child never uses its parent's leases (their keys are the
// parent's, and die with it): its first request grants its own.

#ifndef IPCLOCK_STORES_ETCD_LEASES_H_
#define IPCLOCK_STORES_ETCD_LEASES_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/spi/deadline.h"
#include "stores/etcd/etcd_client.h"

namespace ipclock {

struct EtcdLease {
  int64_t id = 0;
  int64_t ttl_seconds = 0;  // as granted
  pid_t pid = 0;
  // When the newest request etcd answered about the lease was sent.
  std::atomic<int64_t> answered_sent_nanos{0};
  // etcd said it no longer exists.
  std::atomic<bool> gone{false};

  int64_t EarliestExpiryNanos() const {
    return answered_sent_nanos.load(std::memory_order_acquire) + ttl_seconds * 1000000000;
  }
  // The lease's remaining life as far as it is known to last.
  absl::Duration KnownLife() const;
  std::string Hex() const;
};

class EtcdLeases {
 public:
  EtcdLeases(EtcdClient& client, int64_t ttl_seconds, absl::Duration request_timeout)
      : client_(client), ttl_seconds_(ttl_seconds), request_timeout_(request_timeout) {}
  // Revokes this process's leases (which deletes their keys).
  ~EtcdLeases();

  // Grants the first lease now (for NewEtcdStore: a cluster that cannot
  // grant one should fail there).
  absl::Status Start();

  // A lease for a new exclusive key of the resource whose record key is
  // `record`, reserved for it until `Unreserve()`.
  absl::StatusOr<std::shared_ptr<EtcdLease>> ForExclusive(const std::string& record);
  void Unreserve(const std::shared_ptr<EtcdLease>& lease, const std::string& record);
  // The lease for shared keys.
  absl::StatusOr<std::shared_ptr<EtcdLease>> ForShared();

  // Renews `lease` now. OK; NotFound when etcd says it is gone (then
  // `gone` is set); another failure as the client reports it.
  absl::Status KeepAlive(EtcdLease& lease, Deadline deadline);
  // Renews it if a third of its TTL has passed since etcd last answered.
  absl::Status KeepAliveIfDue(EtcdLease& lease, Deadline deadline);
  // When `KeepAliveIfDue` will next send something.
  static int64_t NextDueNanos(const EtcdLease& lease);

  // Marks `lease` gone (a put or keep-alive found it missing).
  void MarkGone(EtcdLease& lease);

 private:
  struct Entry {
    std::shared_ptr<EtcdLease> lease;
    std::set<std::string> exclusive;  // records of the resources it holds a key for
  };
  // With mu_ held: forget leases that are gone, may have expired, or are
  // another process's.
  void PruneLocked(std::vector<std::shared_ptr<EtcdLease>>* parents);
  absl::StatusOr<std::shared_ptr<EtcdLease>> Grant();

  EtcdClient& client_;
  const int64_t ttl_seconds_;
  const absl::Duration request_timeout_;
  std::mutex mu_;
  std::vector<Entry> entries_;  // guarded by mu_; entries_[0] takes shared keys
};

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ETCD_LEASES_H_
