// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/etcd/etcd_leases.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/store_errors.h"
#include "stores/etcd/etcd_names.h"
#include "platform/process_id.h"

namespace ipclock {

namespace {

constexpr int64_t kSecond = 1000000000;
// A lease known to last less than this is not given new keys: it may
// expire before they are put.
constexpr int64_t kFreshMarginNanos = kSecond;
// The longest a store's destruction waits to revoke its leases.
constexpr absl::Duration kRevokeWait = absl::Seconds(2);

int64_t Now() { return Deadline::NowNanos(); }

}  // namespace

absl::Duration EtcdLease::KnownLife() const {
  return absl::Nanoseconds(std::max<int64_t>(0, EarliestExpiryNanos() - Now()));
}

std::string EtcdLease::Hex() const { return LeaseHex(id); }

EtcdLeases::~EtcdLeases() {
  const Deadline deadline = Deadline::In(std::min(request_timeout_, kRevokeWait));
  for (const Entry& e : entries_) {
    if (e.lease->pid != CurrentPid() || e.lease->gone.load()) continue;
    if (deadline.has_passed()) break;
    // Best effort: an unrevoked lease expires within its TTL.
    client_.LeaseRevoke(e.lease->id, deadline).IgnoreError();
  }
}

absl::StatusOr<std::shared_ptr<EtcdLease>> EtcdLeases::Grant() {
  const int64_t sent = Now();
  absl::StatusOr<EtcdLeaseGrant> g =
      client_.LeaseGrant(ttl_seconds_, Deadline::In(request_timeout_));
  if (!g.ok()) return g.status();
  auto lease = std::make_shared<EtcdLease>();
  lease->id = g->id;
  lease->ttl_seconds = g->ttl;
  lease->pid = CurrentPid();
  lease->answered_sent_nanos.store(sent);
  return lease;
}

absl::Status EtcdLeases::Start() {
  absl::StatusOr<std::shared_ptr<EtcdLease>> lease = Grant();
  if (!lease.ok()) return lease.status();
  std::lock_guard<std::mutex> guard(mu_);
  entries_.push_back(Entry{*std::move(lease), {}});
  return absl::OkStatus();
}

void EtcdLeases::PruneLocked(std::vector<std::shared_ptr<EtcdLease>>* parents) {
  const int64_t now = Now();
  auto dead = [&](const Entry& e) {
    if (e.lease->pid != CurrentPid()) {
      parents->push_back(e.lease);
      return true;
    }
    return e.lease->gone.load() || now + kFreshMarginNanos >= e.lease->EarliestExpiryNanos();
  };
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(), dead), entries_.end());
}

absl::StatusOr<std::shared_ptr<EtcdLease>> EtcdLeases::ForExclusive(const std::string& record) {
  std::vector<std::shared_ptr<EtcdLease>> parents;  // dropped after the mutex
  {
    std::lock_guard<std::mutex> guard(mu_);
    PruneLocked(&parents);
    for (Entry& e : entries_) {
      if (e.exclusive.insert(record).second) return e.lease;
    }
  }
  absl::StatusOr<std::shared_ptr<EtcdLease>> fresh = Grant();
  if (!fresh.ok()) return fresh.status();
  std::lock_guard<std::mutex> guard(mu_);
  entries_.push_back(Entry{*fresh, {record}});
  return *fresh;
}

void EtcdLeases::Unreserve(const std::shared_ptr<EtcdLease>& lease, const std::string& record) {
  std::lock_guard<std::mutex> guard(mu_);
  for (Entry& e : entries_) {
    if (e.lease == lease) e.exclusive.erase(record);
  }
}

absl::StatusOr<std::shared_ptr<EtcdLease>> EtcdLeases::ForShared() {
  std::vector<std::shared_ptr<EtcdLease>> parents;
  {
    std::lock_guard<std::mutex> guard(mu_);
    PruneLocked(&parents);
    if (!entries_.empty()) return entries_.front().lease;
  }
  absl::StatusOr<std::shared_ptr<EtcdLease>> fresh = Grant();
  if (!fresh.ok()) return fresh.status();
  std::lock_guard<std::mutex> guard(mu_);
  // Another thread may have granted one meanwhile: the first one serves.
  entries_.insert(entries_.begin(), Entry{*fresh, {}});
  return *fresh;
}

void EtcdLeases::MarkGone(EtcdLease& lease) { lease.gone.store(true); }

absl::Status EtcdLeases::KeepAlive(EtcdLease& lease, Deadline deadline) {
  const int64_t sent = Now();
  absl::StatusOr<int64_t> ttl = client_.LeaseKeepAlive(lease.id, deadline);
  if (!ttl.ok()) return ttl.status();
  if (*ttl <= 0) {
    MarkGone(lease);
    return MissingError(absl::StrCat("lease ", lease.Hex(),
                                     " no longer exists (it expired or was revoked)"));
  }
  int64_t seen = lease.answered_sent_nanos.load();
  while (seen < sent && !lease.answered_sent_nanos.compare_exchange_weak(seen, sent)) {
  }
  return absl::OkStatus();
}

int64_t EtcdLeases::NextDueNanos(const EtcdLease& lease) {
  return lease.answered_sent_nanos.load() + lease.ttl_seconds * kSecond / 3;
}

absl::Status EtcdLeases::KeepAliveIfDue(EtcdLease& lease, Deadline deadline) {
  if (lease.gone.load()) {
    return MissingError(absl::StrCat("lease ", lease.Hex(),
                                     " no longer exists (it expired or was revoked)"));
  }
  if (Now() < NextDueNanos(lease)) return absl::OkStatus();
  return KeepAlive(lease, deadline);
}

}  // namespace ipclock
