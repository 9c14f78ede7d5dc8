// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list` on an etcd store: reads the keys under the DSN's prefix
// with a client of its own (no lease, nothing written). For each resource,
// in the order the cluster created its keys: the holders (the first key,
// or the readers before the first key that is not a reader's), the number
// of keys waiting behind them, each holder's lease and its TTL left, and
// an owner record that no holder explains ("holder died": the next holder
// will be told). Keys of every client are listed: `etcdctl lock` holders
// show their lease, ours also their host and pid (from the owner record).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "stores/etcd/etcd_lock.h"
#include "stores/etcd/etcd_names.h"
#include "stores/etcd/etcd_store.h"
#include "stores/holder_note/holder_note.h"

namespace ipclock {

namespace {

struct ResourceKeys {
  std::string encoded;
  std::string resource;
  std::optional<EtcdKv> record;
  std::vector<EtcdKv> queue;
  std::vector<bool> reader;
};

}  // namespace

absl::StatusOr<HeldLocks> ListEtcdLocks(Dsn& dsn, const ListRequest& request) {
  absl::StatusOr<EtcdStoreOptions> options = EtcdOptionsFromDsn(dsn);
  if (!options.ok()) return options.status();
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  absl::StatusOr<EtcdSetup> setup = EtcdSetupOf(*options);
  if (!setup.ok()) return setup.status();
  EtcdClient client(setup->client);
  const std::string& prefix = setup->prefix;
  const Deadline deadline = Deadline::In(options->request_timeout);

  EtcdRange range;
  std::string only;  // ENC(R) when one resource is asked for
  if (request.resource) {
    const EtcdLockKeys keys = KeysOf(prefix, *request.resource);
    only = EncodeEtcdResource(*request.resource);
    range.key = keys.record;
    range.range_end = keys.queue_end;
  } else if (prefix.empty()) {
    range.key = std::string(1, '\0');
    range.range_end = std::string(1, '\0');
  } else {
    range.key = absl::StrCat(prefix, "/");
    range.range_end = EtcdPrefixEnd(range.key);
  }
  absl::StatusOr<EtcdOpResult> read = client.Get(range, deadline);
  if (!read.ok()) {
    return Restated(read.status(), setup->describe, "",
                    absl::StrCat("list: ", read.status().message()));
  }

  std::map<std::string, ResourceKeys> by_resource;
  for (EtcdKv& kv : read->kvs) {
    std::optional<EtcdKeyName> name = ParseEtcdKey(prefix, kv.key);
    if (!name || (!only.empty() && name->encoded != only)) continue;
    ResourceKeys& r = by_resource[name->encoded];
    r.encoded = name->encoded;
    r.resource = name->resource;
    if (name->record) {
      r.record = std::move(kv);
    } else if (absl::StrContains(name->lock_name, "/") && !name->reader &&
               !absl::StartsWith(name->lock_name, "write/")) {
      continue;  // deeper than a lock key: another prefix's (nested prefixes)
    } else {
      r.reader.push_back(name->reader);
      r.queue.push_back(std::move(kv));
    }
  }

  const std::string host = LocalHostName();
  absl::flat_hash_map<int64_t, int64_t> ttl_left;  // lease -> seconds (-1: gone)
  auto lease_ttl = [&](int64_t lease) -> int64_t {
    auto it = ttl_left.find(lease);
    if (it != ttl_left.end()) return it->second;
    absl::StatusOr<EtcdLeaseInfo> info = client.LeaseTimeToLive(lease, deadline);
    const int64_t ttl = info.ok() ? info->ttl : -2;
    ttl_left[lease] = ttl;
    return ttl;
  };

  std::vector<HeldLock> out;
  for (auto& entry : by_resource) {
    ResourceKeys& r = entry.second;  // a named variable: lambdas below capture it
    // P, the owner record's key: each holder's key is P/<lease>, and is
    // another with every holder.
    const std::string record_key =
        prefix.empty() ? r.encoded : absl::StrCat(prefix, "/", r.encoded);
    // Creation order: the queue's order.
    std::vector<size_t> order(r.queue.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return r.queue[a].create_revision < r.queue[b].create_revision;
    });
    size_t holders = 0;
    if (!order.empty()) {
      if (!r.reader[order[0]]) {
        holders = 1;
      } else {
        while (holders < order.size() && r.reader[order[holders]]) ++holders;
      }
    }
    bool record_explained = !r.record.has_value() || r.record->value.empty();
    // The keys queued behind the holders: ipclock's say who and since when
    // (their note), etcdctl's and Go's nothing.
    std::vector<LockWaiter> waiting;
    for (size_t i = holders; i < order.size(); ++i) {
      LockWaiter w = WaiterFromNote(r.queue[order[i]].value, host);
      w.mode = r.reader[order[i]] ? "shared" : "exclusive";
      waiting.push_back(std::move(w));
    }
    for (size_t i = 0; i < holders; ++i) {
      const EtcdKv& kv = r.queue[order[i]];
      HeldLock lock;
      lock.resource = r.resource;
      lock.object = kv.key;
      lock.lock = record_key;
      lock.mode = r.reader[order[i]] ? "shared" : "exclusive";
      lock.waiters = static_cast<int64_t>(order.size() - holders);
      if (kv.lease != 0) {
        lock.text_details.emplace_back("lease", LeaseHex(kv.lease));
        const int64_t ttl = lease_ttl(kv.lease);
        if (ttl >= 0) lock.number_details.emplace_back("lease_ttl_left", ttl);
      }
      lock.number_details.emplace_back("create_revision", kv.create_revision);
      if (r.record && absl::StartsWith(r.record->value, absl::StrCat(kv.key, " "))) {
        record_explained = true;
        FillFromHolderNote(r.record->value.substr(kv.key.size() + 1), host, &lock);
        // Our holder wrote its record in the transaction that made it the
        // owner: that revision is its fence. Other clients' fences (the
        // revision at which etcdctl saw itself first) are kept nowhere.
        if (!r.reader[order[i]]) lock.fence = r.record->mod_revision;
      } else if (!kv.value.empty()) {
        FillFromHolderNote(kv.value, host, &lock);  // a reader's, or a writer's of old
      }
      if (const HolderNote note = ParseHolderNote(kv.value); note.since > 0) {
        lock.since = note.since;
        lock.since_source = "its key's note: queued then, so the lock was taken then or later";
      }
      lock.waiter_list = waiting;
      out.push_back(std::move(lock));
    }
    if (!record_explained) {
      // Explained also while its holder is still queued behind readers.
      for (const EtcdKv& kv : r.queue) {
        record_explained =
            record_explained || absl::StartsWith(r.record->value, absl::StrCat(kv.key, " "));
      }
    }
    if (!record_explained) {
      HeldLock lock;
      lock.resource = r.resource;
      lock.object = r.record->key;
      lock.lock = record_key;
      lock.mode = "holder died";
      lock.waiters = static_cast<int64_t>(order.size() - holders);
      lock.waiter_list = waiting;
      lock.text_details.emplace_back("last_holder", r.record->value);
      out.push_back(std::move(lock));
    }
  }
  return HeldLocks{setup->describe, std::move(out), {}};
}

}  // namespace ipclock
