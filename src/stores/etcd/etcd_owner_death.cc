// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Whether an owner record left behind is news to the holder that found it
// (include/ipclock/stores/etcd_store.h, "the owner record").
//
// A holder that dies leaves its record, and the next holder is told. But
// `etcdctl lock` and Go's Mutex neither read nor clear it: when one of them
// held the lock after the dead holder and released it cleanly, the record
// is still there for the ipclock holder after it, whose previous holder did
// not die. The record cannot say so; etcd's history of the resource's keys
// can. Holders of a Mutex queue come in the order of their keys' create
// revisions, and every key older than ours that was still there once the
// dead holder's key went held the lock after it (it was then the oldest),
// as did every key made after that and before ours. Such a key is gone by
// the time we hold: so a writer came in between exactly when a key of a
// writer, older than ours, was deleted after the dead holder's key.
// Readers' keys do not count: readers are told of a death too, and the
// next writer clears the record.
//
// The history is read only when a record was left behind, with a watch from
// the record's revision (when its holder became the owner, or was released
// as dead) up to a change we made ourselves: the transaction that made us
// the holder, or, where that was a read (a reader that waited), a put of
// our own key again. Caveats handled here:
//   * etcd may have compacted that history away (a cluster with
//     auto-compaction, a death long ago): the death is then told, as it
//     was before the history was read.
//   * A watch from a past revision is served by etcd's catch-up loop, up to
//     100 ms late: an acquisition that finds a record pays that once.
//   * A waiter of another client that gave up just as the dead holder's
//     key went was, for that moment, first in the queue: it counts as a
//     holder in between, and the death is not told.
//   * A waiter that died too (killed while queued) loses its key with its
//     lease, maybe after the dead holder's: a deletion of an older writer's
//     key is not alone proof of a clean holder. One counts only if the key's
//     lease still lives, as `etcdctl lock`'s does after a clean release (it
//     keeps its session until the lease runs out); a key whose lease is
//     gone may have died, and the death is told. So a Go program that
//     closes its session right after a clean unlock is taken for dead too:
//     a death told once too often, never one hidden.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "stores/etcd/etcd_lock.h"

namespace ipclock {

bool EtcdStore::DiedJustBefore(const EtcdKv& record, const Queued& q, int64_t acquired_at) {
  // "KEY ipclock host=H pid=N[ died=1]": the dead holder's key.
  const std::string dead_key = record.value.substr(0, record.value.find(' '));
  const Deadline deadline = RequestDeadline();
  int64_t end = acquired_at;
  if (end == 0) {
    // Our key put again as it is (its create revision stays): a change in
    // the watched range after the read that made us the holder.
    EtcdTxn t;
    t.IfCreate(q.key, "EQUAL", q.revision);
    t.then().Put(q.key, "", q.lease->id);
    bool unknown = false;
    absl::StatusOr<EtcdTxnResult> r = client_.Txn(t, deadline, &unknown);
    if (!r.ok() || !r->succeeded) return true;
    end = r->revision;
  }
  absl::StatusOr<std::unique_ptr<EtcdWatch>> watch =
      client_.WatchHistory(q.keys.record, q.keys.queue_end, record.mod_revision + 1, deadline);
  if (!watch.ok()) return true;
  // A holder released as dead deleted its key with the record's marking;
  // one that was killed lost it later, with its lease.
  int64_t dead_at = record.mod_revision;
  std::vector<EtcdKv> writers_gone;  // older writers' keys, as they were, by deletion
  for (;;) {
    absl::StatusOr<std::vector<EtcdEvent>> events = (*watch)->Next(deadline);
    if (!events.ok() || (events->empty() && deadline.has_passed())) return true;
    for (const EtcdEvent& e : *events) {
      if (e.kv.mod_revision >= end) return !CleanWriterAfter(writers_gone, dead_at, deadline);
      if (!e.deleted || !absl::StartsWith(e.kv.key, q.keys.queue)) continue;
      if (e.kv.key == dead_key) {
        dead_at = e.kv.mod_revision;
      } else if (e.kv.key != q.key && !q.keys.IsReader(e.kv.key) &&
                 e.prev_kv.create_revision > 0 && e.prev_kv.create_revision < q.revision) {
        EtcdKv gone = e.prev_kv;
        gone.mod_revision = e.kv.mod_revision;
        writers_gone.push_back(gone);
      }
    }
  }
}

bool EtcdStore::CleanWriterAfter(const std::vector<EtcdKv>& writers_gone, int64_t dead_at,
                                 Deadline deadline) {
  for (const EtcdKv& gone : writers_gone) {
    if (gone.mod_revision <= dead_at) continue;
    // A lease that cannot be asked about counts as gone: the death is told.
    absl::StatusOr<EtcdLeaseInfo> lease = client_.LeaseTimeToLive(gone.lease, deadline);
    if (lease.ok() && lease->ttl > 0) return true;
  }
  return false;
}

}  // namespace ipclock
