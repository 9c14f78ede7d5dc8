// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Acquisition on the etcd store: etcd's concurrency.Mutex (exclusive) and
// the readers of recipe.RWMutex (shared), as include/ipclock/stores/etcd_store.h
// lays them out, in as few round trips as the layout allows:
//
//   * Fast path: one transaction that puts our key (and, exclusive, the
//     owner record, reading the old one) only if no key that would block
//     us is in the queue. A compare over an empty range compares one
//     absent key (create revision 0), so "no key in [P/, P0)" is one
//     compare. A try that finds the queue busy is done: it never joined.
//   * Queue: concurrency.Mutex's own put-if-absent (else read the key an
//     earlier attempt of ours may have put), then, in a loop, one
//     transaction that either finds us first and records us (every key in
//     the queue created after our key's revision - 1: ours is the oldest)
//     or names the last key created before ours that blocks us; we watch
//     that key alone for its deletion, from the revision we read at, so a
//     deletion between the read and the watch is not missed.
//   * A waiter renews its lease while it waits (a wait may outlast the
//     TTL), and gives up by deleting its key.
//
// Caveats handled here:
//   * A transaction whose answer was lost may have been applied: what it
//     may have written is deleted (now, or before the store's next
//     request), never left to block the queue until the lease ends.
//   * Our key can vanish while we wait (the lease expired, `etcdctl del`):
//     the queue is joined again from the start while the deadline allows.
//   * A lease etcd no longer knows ("requested lease not found") is dropped
//     and another granted.

#include <unistd.h>

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/backoff.h"
#include "core/platform_deadline.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "platform/event_signal.h"
#include "stores/etcd/etcd_lock.h"
#include "platform/process_id.h"
#include "platform/shm_mapping.h"
#include "platform/wall_clock.h"

namespace ipclock {

namespace {

constexpr absl::Duration kRetryFirst = absl::Milliseconds(50);
constexpr absl::Duration kRetryMax = absl::Seconds(1);
// A watch that cannot be opened is tried again after this long (the
// queue is read again first).
constexpr absl::Duration kWatchRetry = absl::Milliseconds(200);

// Readers' keys: unique per acquisition (recipe.RWMutex uses the time in
// nanoseconds; the lease and a counter make ours unique across processes
// and threads).
std::string ReaderName(int64_t lease) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(absl::ToUnixNanos(WallClockNow()), "-", LeaseHex(lease), "-",
                      counter.fetch_add(1));
}

// Whether the owner record read in a transaction names a holder that did
// not release (anyone but us, who may be reading our own record again).
bool RecordLeftBehind(const EtcdOpResult& read, const std::string& owner) {
  return !read.kvs.empty() && !read.kvs[0].value.empty() && read.kvs[0].value != owner;
}

// The value of our lock keys: the holder note (holder_note.h) and since
// when the key is queued, for `ipclock list` to say who waits and for how
// long. concurrency.Mutex writes its keys empty and reads only their
// revisions, so a value is ours to use.
std::string KeyNote(absl::string_view owner_tag) {
  return absl::StrCat(absl::StripPrefix(owner_tag, " "), CurrentPid(),
                      " since=", WallClockSeconds());
}

bool Transient(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s);
}

// Whether a wait is over without the lock: its deadline passed, or its
// Lock's canceller was cancelled (both leave the queue alike).
bool Over(Deadline deadline, const Key& key) {
  return deadline.has_passed() || key.cancelled();
}

// How long a waiter may sleep: until its deadline, or until its lease is
// due for renewal.
Deadline Until(const EtcdLease& lease, Deadline deadline) {
  const int64_t renew_at = EtcdLeases::NextDueNanos(lease);
  return std::min(deadline, Deadline::In(absl::Nanoseconds(renew_at - Deadline::NowNanos())));
}

}  // namespace

void EtcdStore::Fill(Key& key, const Queued& q, absl::Duration ttl, bool died) {
  EtcdKeyState& st = EnsureState(key);
  st.held = true;
  st.mode = q.mode;
  st.pid = CurrentPid();
  st.record = q.keys.record;
  st.key = q.key;
  st.revision = q.revision;
  st.owner_revision = q.owner_revision;
  st.lease = q.lease;
  st.owner = q.owner;
  st.lost.clear();
  if (st.watch != nullptr) ReopenWatch(st);  // a converted lock the watch follows
  KeyWriter w(key);
  // The fence is the revision at which the lock became ours, as etcdctl's
  // ETCD_LOCK_REV is (concurrency.Mutex's header revision): past the
  // deletion of the previous holder's key, whichever client held it, so
  // that fences grow across clients. The key's create revision does not:
  // a key queued behind etcdctl's holder was created before that holder
  // saw itself first.
  w.set_fence(q.mode == LockMode::kExclusive ? std::optional<uint64_t>(q.owner_revision)
                                             : std::nullopt);
  w.set_previous_owner_died(died);
  w.MarkUnserializable();
  // The Lock's TTL counts from now, not from the start of the wait (which
  // renewed the lease); the lease may end sooner.
  w.ResetLifetime();
  w.ReduceLifetime(std::min(ttl, q.lease->KnownLife()));
}

absl::Status EtcdStore::Enqueue(Queued* q, const Key& key, Deadline deadline) {
  const absl::string_view resource = key.resource();
  Backoff retry(kRetryFirst, kRetryMax);
  for (;;) {
    EtcdTxn t;
    t.IfCreate(q->key, "EQUAL", 0);
    t.then().Put(q->key, "", q->lease->id);
    EtcdRange mine;
    mine.key = q->key;
    t.otherwise().Get(mine);
    bool unknown = false;
    absl::StatusOr<EtcdTxnResult> r = client_.Txn(t, RequestDeadline(), &unknown);
    // Put-if-absent, else read: sending it again is safe, and tells.
    if (!r.ok() && Transient(r.status()) && !Over(deadline, key)) {
      retry.Sleep(deadline, key.cancel_fd());
      continue;
    }
    if (!r.ok()) return Failure(r.status(), resource, "queue (put)");
    if (r->succeeded) {
      q->revision = r->revision;
      return absl::OkStatus();
    }
    if (!r->responses.empty() && !r->responses[0].kvs.empty()) {
      // An earlier attempt of ours put it: that is our place.
      q->revision = r->responses[0].kvs[0].create_revision;
      return absl::OkStatus();
    }
  }
}

void EtcdStore::AwaitDeletion(const std::string& blocker, int64_t created, EtcdLease& lease,
                              Deadline deadline, int cancel_fd) {
  // A watch from now (etcd serves one from a past revision up to 100 ms
  // late), then a look: the blocker still there means any deletion of it
  // is after the watch began, and will be reported.
  absl::StatusOr<std::unique_ptr<EtcdWatch>> watch =
      client_.WatchDeletes(blocker, 0, std::min(deadline, RequestDeadline()));
  if (!watch.ok()) {
    const Deadline retry = std::min(deadline, Deadline::In(kWatchRetry));
    WaitReadableOrCancelled(-1, cancel_fd, ForPlatform(retry));
    return;
  }
  EtcdRange look;
  look.key = blocker;
  look.keys_only = true;
  absl::StatusOr<EtcdOpResult> now = client_.Get(look, RequestDeadline());
  if (!now.ok() || now->kvs.empty() || now->kvs[0].create_revision != created) return;
  // The same watch serves the whole wait: the lease is renewed beside it.
  while (!deadline.has_passed()) {
    const Deadline until = Until(lease, deadline);
    // The canceller's descriptor beside the watch's: Next() polls the
    // watch alone. Input already taken off a TLS stream is read at once.
    if (cancel_fd >= 0 && !(*watch)->HasInput() &&
        WaitReadableOrCancelled((*watch)->fd(), cancel_fd, ForPlatform(until)) ==
            CancellableWait::kCancelled) {
      return;
    }
    absl::StatusOr<std::vector<EtcdEvent>> events = (*watch)->Next(until);
    if (!events.ok()) return;
    for (const EtcdEvent& e : *events) {
      if (e.deleted) return;
    }
    if (until.has_passed() && !deadline.has_passed() &&
        !leases_.KeepAliveIfDue(lease, RequestDeadline()).ok()) {
      return;  // the caller looks at its key again
    }
  }
}

absl::StatusOr<EtcdStore::Turn> EtcdStore::WaitTurn(const Queued& q, const Key& key,
                                                    Deadline deadline,
                                                    std::optional<Blocker> first, bool* died,
                                                    int64_t* owner_revision) {
  const absl::string_view resource = key.resource();
  const bool exclusive = q.mode == LockMode::kExclusive;
  Backoff retry(kRetryFirst, kRetryMax);
  if (first) {
    AwaitDeletion(first->key, first->create_revision, *q.lease, deadline, key.cancel_fd());
  }
  for (;;) {
    // Cancelled: the caller deletes our key, as after the deadline.
    if (key.cancelled()) return Turn::kBusy;
    // The wait may outlast the lease: renew it as its holder would.
    if (absl::Status ka = leases_.KeepAliveIfDue(*q.lease, RequestDeadline());
        absl::IsNotFound(ka)) {
      return Turn::kLostQueue;
    }
    EtcdRange mine;
    mine.key = q.key;
    EtcdRange older;  // the last key before ours
    older.by_create = true;
    older.descending = true;
    older.limit = 1;
    older.max_create_revision = q.revision - 1;
    older.keys_only = true;
    EtcdTxn t;
    if (exclusive) {
      // First in the queue: every key in it is ours or newer.
      t.IfCreate(q.key, "EQUAL", q.revision)
          .IfCreate(q.keys.queue, "GREATER", q.revision - 1, q.keys.queue_end);
      EtcdRange record;
      record.key = q.keys.record;
      t.then().Get(record).Put(q.keys.record, q.owner, 0);
      older.key = q.keys.queue;
      older.range_end = q.keys.queue_end;
      t.otherwise().Get(mine).Get(older);
    } else {
      // Readers wait only for older keys that are not readers': those
      // before P/read/ and those after it.
      t.then().Get(mine);
      older.key = q.keys.queue;
      older.range_end = q.keys.readers;
      t.then().Get(older);
      older.key = q.keys.readers_end;
      older.range_end = q.keys.queue_end;
      t.then().Get(older);
      EtcdRange record;
      record.key = q.keys.record;
      t.then().Get(record);
    }
    bool unknown = false;
    absl::StatusOr<EtcdTxnResult> r = client_.Txn(t, RequestDeadline(), &unknown);
    if (!r.ok()) {
      // Unanswered: writing the record again is harmless.
      if (Transient(r.status()) && !Over(deadline, key)) {
        if (Deadline::NowNanos() >= q.lease->EarliestExpiryNanos()) return Turn::kLostQueue;
        retry.Sleep(deadline, key.cancel_fd());
        continue;
      }
      return Failure(r.status(), resource, "wait in the queue");
    }
    const EtcdKv* blocker = nullptr;
    if (exclusive) {
      if (r->succeeded) {
        *died = !r->responses.empty() && RecordLeftBehind(r->responses[0], q.owner) &&
                DiedJustBefore(r->responses[0].kvs[0], q, r->revision);
        // The revision of the put of our record, after the deletion of the
        // last key before ours.
        *owner_revision = r->revision;
        return Turn::kHeld;
      }
      if (r->responses.size() < 2 || r->responses[0].kvs.empty() ||
          r->responses[0].kvs[0].create_revision != q.revision) {
        return Turn::kLostQueue;
      }
      if (!r->responses[1].kvs.empty()) blocker = &r->responses[1].kvs[0];
    } else {
      if (r->responses.size() < 4 || r->responses[0].kvs.empty() ||
          r->responses[0].kvs[0].create_revision != q.revision) {
        return Turn::kLostQueue;
      }
      for (int i : {1, 2}) {
        const std::vector<EtcdKv>& kvs = r->responses[i].kvs;
        if (!kvs.empty() && (blocker == nullptr ||
                             kvs[0].create_revision > blocker->create_revision)) {
          blocker = &kvs[0];
        }
      }
      if (blocker == nullptr) {
        // A record left by a writer means it died; the next writer clears it.
        *died = RecordLeftBehind(r->responses[3], "") &&
                DiedJustBefore(r->responses[3].kvs[0], q, 0);
        // A read: the cluster's revision when it answered, no earlier than
        // the deletion of the last key that blocked us.
        *owner_revision = r->revision;
        return Turn::kHeld;
      }
    }
    if (blocker == nullptr) continue;  // changed between the compare and the read
    if (Over(deadline, key)) return Turn::kBusy;
    AwaitDeletion(blocker->key, blocker->create_revision, *q.lease, deadline, key.cancel_fd());
  }
}

absl::StatusOr<bool> EtcdStore::AcquireFromNothing(Key& key, LockMode mode, Deadline deadline) {
  // The TTL the Lock asked for (it set the key's expiry just before).
  const absl::Duration ttl = key.RemainingLifetime();
  RetryPendingReleases();
  const bool exclusive = mode == LockMode::kExclusive;
  const EtcdLockKeys keys = KeysOf(prefix_, key.resource());
  Backoff retry(kRetryFirst, kRetryMax);
  for (;;) {
    Queued q;
    q.keys = keys;
    q.mode = mode;
    absl::StatusOr<std::shared_ptr<EtcdLease>> lease =
        exclusive ? leases_.ForExclusive(keys.record) : leases_.ForShared();
    if (!lease.ok()) {
      if (Transient(lease.status()) && !Over(deadline, key)) {
        retry.Sleep(deadline, key.cancel_fd());
        continue;
      }
      return Failure(lease.status(), key.resource(), "grant a lease");
    }
    q.lease = *std::move(lease);
    auto unreserve = [&]() {
      if (exclusive) leases_.Unreserve(q.lease, keys.record);
    };
    if (absl::Status ka = leases_.KeepAliveIfDue(*q.lease, RequestDeadline()); !ka.ok()) {
      unreserve();
      if (absl::IsNotFound(ka)) continue;  // gone: another lease
      if (Transient(ka) && !Over(deadline, key)) {
        retry.Sleep(deadline, key.cancel_fd());
        continue;
      }
      return Failure(ka, key.resource(), "renew the lease");
    }
    q.key = exclusive ? keys.MutexKey(q.lease->id)
                      : absl::StrCat(keys.readers, ReaderName(q.lease->id));
    if (exclusive) q.owner = absl::StrCat(q.key, owner_tag_, CurrentPid());

    // Fast path: nothing that blocks us is queued. Otherwise, unless this
    // is a try, the same transaction queues our key (concurrency.Mutex's
    // put-if-absent) and reads the newest keys that block us, which were
    // all created before ours: the last of them is the one to wait for.
    EtcdTxn t;
    EtcdRange record;
    record.key = keys.record;
    EtcdRange newest;
    newest.by_create = true;
    newest.descending = true;
    newest.keys_only = true;
    const bool wait = !deadline.has_passed();
    const std::string note = KeyNote(owner_tag_);
    EtcdTxn enqueue;
    enqueue.IfCreate(q.key, "EQUAL", 0);
    enqueue.then().Put(q.key, note, q.lease->id);
    if (exclusive) {
      t.IfCreate(keys.queue, "EQUAL", 0, keys.queue_end);
      t.then().Get(record).Put(q.key, note, q.lease->id).Put(keys.record, q.owner, 0);
      if (wait) {
        newest.key = keys.queue;
        newest.range_end = keys.queue_end;
        newest.limit = 2;  // ours, and the one before it
        t.otherwise().Txn(enqueue).Get(newest);
      }
    } else {
      t.IfCreate(keys.queue, "EQUAL", 0, keys.readers)
          .IfCreate(keys.readers_end, "EQUAL", 0, keys.queue_end)
          .IfCreate(q.key, "EQUAL", 0);
      t.then().Get(record).Put(q.key, note, q.lease->id);
      if (wait) {
        newest.limit = 1;
        newest.key = keys.queue;
        newest.range_end = keys.readers;
        t.otherwise().Txn(enqueue).Get(newest);
        newest.key = keys.readers_end;
        newest.range_end = keys.queue_end;
        t.otherwise().Get(newest);
      }
    }
    bool unknown = false;
    int64_t newest_seen = 0;
    absl::StatusOr<EtcdTxnResult> r = client_.Txn(t, RequestDeadline(), &unknown);
    if (!r.ok()) {
      if (unknown) {
        Abandon(EtcdPendingRelease{q.lease, keys.record, q.key, 0, q.owner, mode});
      } else {
        unreserve();
      }
      if (absl::IsNotFound(r.status())) {
        // "requested lease not found": etcd dropped it (revoked, expired).
        leases_.MarkGone(*q.lease);
        continue;
      }
      if (Transient(r.status()) && !Over(deadline, key)) {
        retry.Sleep(deadline, key.cancel_fd());
        continue;
      }
      return Failure(r.status(), key.resource(), "acquire");
    }
    if (r->succeeded) {
      q.revision = r->revision;
      q.owner_revision = r->revision;
      Fill(key, q, ttl,
           !r->responses.empty() && RecordLeftBehind(r->responses[0], q.owner) &&
               DiedJustBefore(r->responses[0].kvs[0], q, r->revision));
      return true;
    }
    if (!wait || r->responses.empty()) {
      unreserve();
      return false;
    }

    // Queued, and waiting.
    std::optional<Blocker> first;
    if (r->responses[0].succeeded) {
      q.revision = r->revision;
      for (size_t i = 1; i < r->responses.size(); ++i) {
        for (const EtcdKv& kv : r->responses[i].kvs) {
          if (kv.key == q.key) continue;
          if (!first || kv.create_revision > newest_seen) {
            first = Blocker{kv.key, kv.create_revision};
            newest_seen = kv.create_revision;
          }
        }
      }
    } else if (absl::Status s = Enqueue(&q, key, deadline); !s.ok()) {
      // Our key was there already (an earlier unanswered attempt's): its
      // revision is our place.
      Abandon(EtcdPendingRelease{q.lease, keys.record, q.key, 0, q.owner, mode});
      if (absl::IsNotFound(s)) {  // "requested lease not found"
        leases_.MarkGone(*q.lease);
        continue;
      }
      return s;
    }
    bool died = false;
    absl::StatusOr<Turn> turn = WaitTurn(q, key, deadline, first, &died, &q.owner_revision);
    if (turn.ok() && *turn == Turn::kHeld) {
      Fill(key, q, ttl, died);
      return true;
    }
    // Leaving the queue: a waiter that gives up deletes its key (and the
    // record, should an unanswered turn have written it).
    Abandon(EtcdPendingRelease{q.lease, keys.record, q.key, q.revision, q.owner, mode});
    if (!turn.ok()) return turn.status();
    if (*turn == Turn::kBusy) return false;
    // Our key vanished while we waited (its lease ended, or a client
    // deleted it): join again while the deadline allows.
    if (key.cancelled()) return false;
    if (deadline.has_passed()) {
      return LostError(describe_, key.resource(),
                       absl::StrCat("our queued key ", q.key, " vanished while we waited "
                                    "(its lease ", q.lease->Hex(), " ended, or another "
                                    "client deleted it)"));
    }
  }
}

absl::StatusOr<bool> EtcdStore::Convert(Key& key, LockMode mode, Deadline deadline) {
  const absl::Duration ttl = key.RemainingLifetime();
  EtcdKeyState& st = *state(key);
  const bool exclusive = mode == LockMode::kExclusive;
  const EtcdLockKeys keys = KeysOf(prefix_, key.resource());
  Queued q;
  q.keys = keys;
  q.mode = mode;
  absl::StatusOr<std::shared_ptr<EtcdLease>> lease =
      exclusive ? leases_.ForExclusive(keys.record) : leases_.ForShared();
  if (!lease.ok()) return Failure(lease.status(), key.resource(), "grant a lease");
  q.lease = *std::move(lease);
  auto unreserve_new = [&]() {
    if (exclusive) leases_.Unreserve(q.lease, keys.record);
  };
  q.key = exclusive ? keys.MutexKey(q.lease->id)
                    : absl::StrCat(keys.readers, ReaderName(q.lease->id));
  if (exclusive) q.owner = absl::StrCat(q.key, owner_tag_, CurrentPid());
  // Our key goes and one of the other kind joins the end of the queue, in
  // one step: nobody ever sees the resource without one of ours between.
  // A writer that demotes releases cleanly: its record goes too.
  EtcdTxn t;
  t.IfCreate(st.key, "EQUAL", st.revision);
  t.then().Delete(st.key).Put(q.key, KeyNote(owner_tag_), q.lease->id);
  if (!st.owner.empty()) {
    EtcdTxn clear;
    clear.IfValue(st.record, "EQUAL", st.owner);
    clear.then().Delete(st.record);
    t.then().Txn(clear);
  }
  bool unknown = false;
  absl::StatusOr<EtcdTxnResult> r = client_.Txn(t, RequestDeadline(), &unknown);
  const EtcdPendingRelease old{st.lease, st.record, st.key, st.revision, st.owner, st.mode};
  if (!r.ok()) {
    if (!unknown) {
      // Not applied: the lock is as it was.
      unreserve_new();
      return Failure(r.status(), key.resource(), "convert");
    }
    // Either state may be in etcd: give both up.
    Abandon(old);
    Abandon(EtcdPendingRelease{q.lease, keys.record, q.key, 0, "", mode});
    TakeState(key);
    return Failure(r.status(), key.resource(), "convert (the lock was given up)");
  }
  if (!r->succeeded) {
    unreserve_new();
    return Lost(key, st, absl::StrCat("our key ", st.key, " was gone before the conversion: ",
                                      WhyGone(st)));
  }
  if (st.mode == LockMode::kExclusive) leases_.Unreserve(st.lease, st.record);
  q.revision = r->revision;
  // The conversion has given up the lock we held, whatever comes next.
  st.held = false;
  bool died = false;
  absl::StatusOr<Turn> turn = WaitTurn(q, key, deadline, std::nullopt, &died, &q.owner_revision);
  if (turn.ok() && *turn == Turn::kHeld) {
    Fill(key, q, ttl, died);
    return true;
  }
  Abandon(EtcdPendingRelease{q.lease, keys.record, q.key, q.revision, q.owner, mode});
  TakeState(key);
  if (!turn.ok()) return turn.status();
  if (*turn == Turn::kBusy) return false;
  return LostError(describe_, key.resource(),
                   absl::StrCat("our queued key ", q.key, " vanished during the conversion"));
}

}  // namespace ipclock
