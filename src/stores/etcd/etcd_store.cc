// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// EtcdStore: checks of held locks (the watch stream, a read, the lease's
// known life), renewals, releases and conversions' dispatch. Acquisition is
// in etcd_queue.cc; the contract in include/ipclock/stores/etcd_store.h.
//
// Caveats handled here:
//   * A check never calls a lock lost while etcd cannot be asked and the
//     lease may still live, nor held once the TTL has passed since the
//     last renewal etcd confirmed (the cluster may have expired it).
//   * The watch on held locks polls one descriptor number per lock for
//     the lock's life. A watch stream that ends is opened again onto the
//     same number (dup3), so that number never dangles or names another
//     file; until then the dead socket keeps it (readable, so the lock is
//     checked at each interval).
//   * A release etcd does not confirm is tried again before the store's
//     next request; until then the resource's slot on the lease stays
//     taken, so that no second key of ours queues behind the first.

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/capability_flags.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "stores/etcd/etcd_lock.h"
#include "stores/etcd/etcd_store.h"
#include "stores/holder_note/holder_note.h"
#include "platform/process_id.h"

namespace ipclock {

namespace {

// The longest a check of a held lock waits for etcd: the watch's thread
// serves every lock of the process.
constexpr absl::Duration kCheckWait = absl::Seconds(1);
// Pending releases are retried with this bound on each.
constexpr absl::Duration kRetryReleaseWait = absl::Seconds(1);
// Messages drained from a held lock's watch per check, at most.
constexpr int kMaxDrain = 16;

int64_t Now() { return Deadline::NowNanos(); }

std::string Millis(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Milliseconds(1)));
}

// `s`, or for a request that timed out Unavailable: a store that did not
// answer, not a busy lock.
absl::Status Unanswered(const absl::Status& s) {
  return absl::IsDeadlineExceeded(s) ? TransientError(s.message()) : s;
}

}  // namespace

EtcdStore::EtcdStore(const EtcdStoreOptions& options, EtcdClientSettings client_settings,
                     std::string describe)
    : options_(options),
      describe_(std::move(describe)),
      prefix_(options.prefix),
      client_(std::move(client_settings)),
      leases_(client_, absl::ToInt64Seconds(options.ttl), options.request_timeout) {
  owner_tag_ = absl::StrCat(" ", HolderNotePrefix());
}

EtcdStore::~EtcdStore() {
  // Releases still owed go first; the leases' revocation (EtcdLeases'
  // destructor) then deletes whatever else is left of ours.
  RetryPendingReleases();
}

Capabilities EtcdStore::capabilities() const { return EtcdCapabilities(); }

Capabilities EtcdCapabilities() {
  // Blocking: a waiter sleeps on a watch of the key before it. Expiring:
  // the lease, renewed, or the locks go; and the locks are tied to it (not
  // serializable). Shared: recipe.RWMutex's readers. Fencing: the revision
  // at which the lock became ours. Owner death: the owner record.
  return MakeCapabilities(kEtcdEntry.scope, kCanBlock | kCanExpire | kCanShare | kCanFence |
                                                kSeesOwnerDeath | kCanCancel);
}

absl::Status EtcdStore::Start() { return leases_.Start(); }

absl::Status EtcdStore::Failure(const absl::Status& s, absl::string_view resource,
                                absl::string_view what) const {
  return Restated(Unanswered(s), describe_, resource, absl::StrCat(what, ": ", s.message()));
}

absl::Status EtcdStore::NotOurs(const Key& key) const {
  return MisuseError(describe_, key.resource(),
                     "this lock belongs to the lease of the process that acquired it, "
                     "not to this forked child");
}

absl::Status EtcdStore::Lost(Key& key, EtcdKeyState& st, std::string why) {
  if (st.lost.empty()) st.lost = std::move(why);
  return LostError(describe_, key.resource(), st.lost);
}

std::string EtcdStore::WhyGone(const EtcdKeyState& st) {
  absl::StatusOr<EtcdLeaseInfo> info =
      client_.LeaseTimeToLive(st.lease->id, Deadline::In(kCheckWait));
  if (info.ok() && info->ttl < 0) {
    leases_.MarkGone(*st.lease);
    return absl::StrCat("the lock key ", st.key, " is gone with its lease ", st.lease->Hex(),
                        ", which ended (it expired, or was revoked): etcd deleted every "
                        "key on it, and every lock of this process on that lease is lost");
  }
  if (info.ok()) {
    return absl::StrCat("the lock key ", st.key, " was deleted by another client (its lease ",
                        st.lease->Hex(), " lives on)");
  }
  return absl::StrCat("the lock key ", st.key, " is gone (its lease ", st.lease->Hex(),
                      " ended, or another client deleted it)");
}

absl::Status EtcdStore::Unreachable(Key& key, EtcdKeyState& st, const absl::Status& why) {
  const int64_t expiry = st.lease->EarliestExpiryNanos();
  const int64_t now = Now();
  const absl::Duration since = absl::Nanoseconds(
      now - st.lease->answered_sent_nanos.load());
  if (now >= expiry) {
    return Lost(key, st,
                absl::StrCat("no renewal of lease ", st.lease->Hex(), " confirmed for ",
                             Millis(since), ", longer than its TTL (", st.lease->ttl_seconds,
                             "s): the cluster has expired it or is about to, and this lock "
                             "with it (etcd: ", why.message(), ")"));
  }
  return TransientError(
      describe_, key.resource(),
      absl::StrCat("etcd cannot be asked now (", why.message(), "); the lease ",
                   st.lease->Hex(), " and the lock outlive this until its TTL (",
                   st.lease->ttl_seconds, "s) passes without a confirmed renewal, ",
                   Millis(absl::Nanoseconds(expiry - now)), " from now"));
}

void EtcdStore::ReopenWatch(EtcdKeyState& st) {
  absl::StatusOr<std::unique_ptr<EtcdWatch>> fresh =
      client_.WatchDeletes(st.key, st.revision + 1, Deadline::In(kCheckWait));
  if (!fresh.ok()) return;
  if (st.watch != nullptr && st.watch_fd >= 0) {
    // The number the watch on held locks polls now names the new stream.
    if (!(*fresh)->stream().MoveToDescriptor(st.watch_fd).ok()) return;
    st.watch->stream().ForgetDescriptor();
  } else {
    st.watch_fd = (*fresh)->fd();
  }
  st.watch = *std::move(fresh);
}

absl::Status EtcdStore::CheckWatch(Key& key, EtcdKeyState& st) {
  for (int i = 0; i < kMaxDrain && st.watch->HasInput(); ++i) {
    absl::StatusOr<std::vector<EtcdEvent>> events = st.watch->Next(Deadline::Past());
    if (!events.ok()) return events.status();  // the stream ended: read instead
    for (const EtcdEvent& e : *events) {
      if (e.deleted && e.kv.key == st.key) return Lost(key, st, WhyGone(st));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<EtcdKeyState*> EtcdStore::LiveState(Key& key) {
  EtcdKeyState* st = state(key);
  if (st == nullptr || !st->held) {
    return LostError(describe_, key.resource(),
                     st != nullptr && !st->lost.empty() ? st->lost : "the lock is not held");
  }
  if (st->pid != CurrentPid()) return NotOurs(key);
  if (!st->lost.empty()) return Lost(key, *st, "");
  return st;
}

absl::Status EtcdStore::CheckHeld(Key& key) {
  absl::StatusOr<EtcdKeyState*> live = LiveState(key);
  if (!live.ok()) return live.status();
  EtcdKeyState* st = *live;
  if (key.IsExpired()) {
    // The Lock's own TTL ran out unrenewed: it may no longer count on the
    // lock (its key goes at the release that follows).
    return Lost(key, *st, absl::StrCat("the lock's TTL ran out ", Millis(key.ExpiredFor()),
                                       " ago without a renewal"));
  }
  bool watch_alive = true;
  if (st->watch != nullptr) {
    absl::Status w = CheckWatch(key, *st);
    if (absl::IsAborted(w)) return w;
    watch_alive = w.ok();
  }
  EtcdRange mine;
  mine.key = st->key;
  absl::StatusOr<EtcdOpResult> r =
      client_.Get(mine, HeldDeadline(*st->lease, std::min(kCheckWait, options_.request_timeout)));
  if (!r.ok()) {
    if (absl::IsUnavailable(r.status()) || absl::IsDeadlineExceeded(r.status())) {
      return Unreachable(key, *st, r.status());
    }
    return Failure(r.status(), key.resource(), "check");
  }
  if (r->kvs.empty()) return Lost(key, *st, WhyGone(*st));
  if (r->kvs[0].create_revision != st->revision) {
    return Lost(key, *st,
                absl::StrCat("the lock key ", st->key, " was deleted and put again (create "
                             "revision ", r->kvs[0].create_revision, ", ours was ",
                             st->revision, ")"));
  }
  if (!watch_alive) ReopenWatch(*st);
  return absl::OkStatus();
}

absl::StatusOr<bool> EtcdStore::IsHeld(Key& key) {
  EtcdKeyState* st = state(key);
  if (st == nullptr || !st->held || st->pid != CurrentPid()) return false;
  return HeldUnlessLost(CheckHeld(key));
}

WatchTargets EtcdStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  EtcdKeyState* st = state(key);
  if (st == nullptr || !st->held || st->pid != CurrentPid() || !st->lost.empty()) return targets;
  if (st->watch == nullptr) ReopenWatch(*st);
  // Without a watch the lock is still checked at the watch's interval.
  if (st->watch != nullptr) targets.poll_fds.push_back(st->watch_fd);
  return targets;
}

absl::Status EtcdStore::Extend(Key& key, absl::Duration /*ttl*/) {
  absl::StatusOr<EtcdKeyState*> live = LiveState(key);
  if (!live.ok()) return live.status();
  EtcdKeyState* st = *live;
  RetryPendingReleases();
  absl::Status renewed =
      leases_.KeepAlive(*st->lease, HeldDeadline(*st->lease, options_.request_timeout));
  if (absl::IsNotFound(renewed)) return Lost(key, *st, WhyGone(*st));
  if (!renewed.ok()) {
    if (absl::IsUnavailable(renewed) || absl::IsDeadlineExceeded(renewed)) {
      return Unreachable(key, *st, renewed);
    }
    return Failure(renewed, key.resource(), "renew the lease");
  }
  // The lease lives; so must the key (a client may have deleted it).
  EtcdRange mine;
  mine.key = st->key;
  absl::StatusOr<EtcdOpResult> r = client_.Get(mine, RequestDeadline());
  if (r.ok() && (r->kvs.empty() || r->kvs[0].create_revision != st->revision)) {
    return Lost(key, *st, WhyGone(*st));
  }
  // The Lock set its own TTL; the lease may end sooner.
  KeyWriter(key).ReduceLifetime(st->lease->KnownLife());
  return absl::OkStatus();
}

absl::StatusOr<bool> EtcdStore::Acquire(Key& key, LockMode mode, Deadline deadline) {
  if (EtcdKeyState* st = state(key); st != nullptr && st->held) {
    if (st->pid != CurrentPid()) {
      // The parent's lock, inherited through fork(): not ours to use.
      TakeState(key);
    } else if (!st->lost.empty()) {
      return Lost(key, *st, "");
    } else if (st->mode == mode) {
      return true;
    } else {
      return Convert(key, mode, deadline);
    }
  }
  return AcquireFromNothing(key, mode, deadline);
}

absl::Status EtcdStore::SendRelease(const EtcdPendingRelease& r, Deadline deadline,
                                    bool* was_there) {
  *was_there = false;
  EtcdTxn t;
  // A revision of 0: a key whose put was never confirmed, ours by its name.
  if (r.revision != 0) t.IfCreate(r.key, "EQUAL", r.revision);
  t.then().Delete(r.key);
  if (!r.owner.empty()) {
    // Our record goes with our key: the next holder must not think we died.
    // Released as dead, it stays with a value no holder's owner can equal,
    // so that the next holder (this process's too) is told.
    EtcdTxn clear;
    clear.IfValue(r.record, "EQUAL", r.owner);
    if (r.died) {
      clear.then().Put(r.record, absl::StrCat(r.owner, " died=1"), 0);
    } else {
      clear.then().Delete(r.record);
    }
    t.then().Txn(clear);
  }
  bool unknown = false;
  absl::StatusOr<EtcdTxnResult> done = client_.Txn(t, deadline, &unknown);
  if (!done.ok()) return done.status();
  *was_there = done->succeeded && !done->responses.empty() && done->responses[0].deleted > 0;
  return absl::OkStatus();
}

void EtcdStore::Abandon(EtcdPendingRelease release) {
  bool was_there = false;
  absl::Status s = SendRelease(release, Deadline::In(kRetryReleaseWait), &was_there);
  if (s.ok() || release.lease->pid != CurrentPid()) {
    if (release.mode == LockMode::kExclusive) leases_.Unreserve(release.lease, release.record);
    return;
  }
  std::lock_guard<std::mutex> guard(pending_mu_);
  pending_.push_back(std::move(release));
}

void EtcdStore::RetryPendingReleases() {
  std::vector<EtcdPendingRelease> todo;
  {
    std::lock_guard<std::mutex> guard(pending_mu_);
    if (pending_.empty()) return;
    todo.swap(pending_);
  }
  for (EtcdPendingRelease& r : todo) {
    // A child's copy of its parent's: the parent releases them.
    if (r.lease->pid != CurrentPid()) continue;
    // Once the lease is gone its keys are too; only a record may be left.
    Abandon(std::move(r));
  }
}

absl::Status EtcdStore::DoRelease(Key& key, bool died) {
  EtcdKeyState* st = state(key);
  if (st == nullptr) return absl::OkStatus();
  if (!st->held) {
    std::string lost = st->lost;
    TakeState(key);
    if (lost.empty()) return absl::OkStatus();
    return LostError(describe_, key.resource(), lost);
  }
  std::unique_ptr<EtcdKeyState> owned = TakeState(key);
  if (owned->pid != CurrentPid()) return absl::OkStatus();  // the parent releases it
  EtcdPendingRelease release{owned->lease, owned->record, owned->key, owned->revision,
                             owned->owner, owned->mode, died};
  bool was_there = false;
  absl::Status s = SendRelease(release, RequestDeadline(), &was_there);
  if (s.ok()) {
    if (owned->mode == LockMode::kExclusive) leases_.Unreserve(owned->lease, owned->record);
    if (!owned->lost.empty()) {
      return LostError(describe_, key.resource(), owned->lost);
    }
    if (!was_there) {
      return LostError(describe_, key.resource(),
                       absl::StrCat("at release: ", WhyGone(*owned)));
    }
    return absl::OkStatus();
  }
  {
    std::lock_guard<std::mutex> guard(pending_mu_);
    pending_.push_back(std::move(release));
  }
  if (!owned->lost.empty()) {
    return LostError(describe_, key.resource(), owned->lost);
  }
  return Restated(Unanswered(s), describe_, key.resource(),
                  absl::StrCat("release: ", s.message(), " (the release is tried again "
                               "before this store's next request; the lease's end "
                               "removes the key otherwise)"));
}

std::optional<EtcdHeldKey> EtcdStore::HeldKey(const Key& key) const {
  const EtcdKeyState* st = state(key);
  if (st == nullptr || !st->held) return std::nullopt;
  return EtcdHeldKey{st->key, st->owner_revision, st->lease->id, st->revision};
}

}  // namespace ipclock
