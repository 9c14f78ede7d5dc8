// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// MemcachedStore. See include/ipclock/stores/memcached_store.h for the contract and
// spec/interop.md ("Memcached") for Symfony's format. Every operation is a
// short sequence of memcached's own commands (add, gets, cas, delete, get)
// on one key: memcached has no scripts, so each check-then-act step is a
// compare-and-swap on the value's CAS id, and the caveats of each sequence
// are written beside it.

#include "stores/memcached/memcached_store.h"

#include <errno.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/backoff.h"
#include "core/key_naming.h"
#include "core/store_errors.h"
#include "ipclock/spi/store_interface.h"
#include "platform/errors.h"
#include "stores/memcached/memcached_conn.h"
#include "stores/memcached/memcached_options.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "memcached";

// memcached's text protocol: keys of at most 250 bytes, no space or control
// byte. Values here are 44-byte tokens.
constexpr size_t kMaxKeyBytes = 250;
// The holder marker of a lock key K is K + this (see the header).
constexpr absl::string_view kMarkerSuffix = ":ipclock";
// Symfony's release first moves the expiry to 2 s (see Release()).
constexpr time_t kReleaseExpiry = 2;

// A check of one held lock may take its answer from a multi-get of every
// held lock's key of the store made this recently: the watch checks the
// locks of a store together, and so one request a round answers them all.
// Only a "still held" is taken from it, and only from one asked for after
// the lock was taken; a key missing from it or holding another token is
// asked about on its own before a loss is reported.
constexpr int64_t kSharedCheckNanos = 100 * 1000 * 1000;
// The watch checks a held lock at least this often, at one multi-get a
// round for all the store's held locks.
constexpr absl::Duration kCheckAtLeastEvery = absl::Milliseconds(100);

constexpr absl::Duration kPollFirst = absl::Milliseconds(5);
constexpr absl::Duration kPollMax = absl::Milliseconds(50);
constexpr absl::Duration kReconnectFirst = absl::Milliseconds(50);
constexpr absl::Duration kReconnectMax = absl::Seconds(1);
constexpr size_t kMaxOrphans = 256;

struct MemcachedKeyState final : KeyState {
  // Whether this key holds the lock as far as this process knows, so that a
  // release can tell "never held" (OK, touches nothing) from "held and
  // lost" (Aborted).
  bool held = false;
  // When it was last acquired (monotonic ns), for a shared check's answer
  // asked for after it.
  int64_t held_since = 0;
};

class MemcachedStore final : public StoreWithRelease<MemcachedKeyState> {
 public:
  MemcachedStore(const MemcachedStoreOptions& options, KeyNaming naming,
                 const std::string& describe)
      : options_(options), naming_(std::move(naming)), describe_(describe),
        conn_(options, describe) {}

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override { return MemcachedCapabilities(options_); }

  void WarnIfNoSecret() const { ipclock::WarnIfNoSecret(naming_, describe_); }

  // Connects and asks every server for its version.
  absl::Status Start() {
    std::lock_guard<std::mutex> guard(mu_);
    if (absl::Status s = conn_.Ensure(); !s.ok()) return s;
    memcached_return_t rc = conn_.Version();
    if (rc == MEMCACHED_SOME_ERRORS && !conn_.ServerErrors().empty()) {
      return TransientError(describe_, "",
                            absl::StrCat("cannot reach ", conn_.ServerErrors()));
    }
    if (rc != MEMCACHED_SUCCESS) {
      return TransientError(describe_, "",
                            absl::StrCat("cannot reach ", conn_.servers(), ": ",
                                         conn_.ErrorText(rc)));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status Extend(Key& key, absl::Duration ttl) override;
  // Release() and ReleaseAsDead(): `died` leaves the holder marker, as a
  // holder that died would.
  absl::Status DoRelease(Key& key, bool died) override;
  absl::StatusOr<bool> IsHeld(Key& key) override;
  absl::Status CheckHeld(Key& key) override;
  // A flushed, deleted or evicted key sends nothing: the checks find it,
  // at least every kCheckAtLeastEvery.
  WatchTargets GetWatchTargets(Key&) override {
    WatchTargets targets;
    targets.check_at_least_every = kCheckAtLeastEvery;
    return targets;
  }

 private:
  struct Orphan {
    std::string name;
    std::string token;
  };

  // The server-side key of `resource` (without prefix_key, which
  // libmemcached adds), or InvalidArgument if memcached cannot store it.
  absl::StatusOr<std::string> KeyName(const std::string& resource) const;
  // The server-side key of `key`'s resource and `key`'s token, once the key
  // has one.
  absl::Status NameAndToken(Key& key, std::string* name, absl::string_view* token) const;
  // Aborted unless `found` holds `token`: `gone` when there is no key,
  // `taken` when it holds another owner's token.
  absl::Status OursOrLost(const Key& key, const MemcachedFound& found, absl::string_view token,
                          absl::string_view gone, absl::string_view taken) const {
    if (found.present && found.value == token) return absl::OkStatus();
    return LostError(describe_, key.resource(),
                     found.present ? taken : gone);
  }
  // gets of key `name` under mu_, the server made ready first (EnsureLocked());
  // a failure names `what` asked it.
  absl::StatusOr<MemcachedFound> GetsLocked(const Key& key, const std::string& name,
                                            absl::string_view what);

  // conn_.Ensure(), and in a forked child the parent's pending releases
  // dropped (the parent retries its own).
  absl::Status EnsureLocked();
  // Symfony's release: gets, then cas of our token to a short expiry, then
  // delete. OK when it released; Aborted saying what it found otherwise.
  // Unless `died`, our holder marker is cleared first.
  absl::Status ReleaseLocked(const std::string& name, absl::string_view token,
                             absl::string_view resource, bool died = false);
  // The holder marker of key `name` (see the header), or "" when the name
  // leaves no room for it.
  std::string MarkerName(const std::string& name) const;
  // After an acquisition: whether the marker names another holder (one that
  // never released), and then ours in it. Best effort: a marker that cannot
  // be read or written reports no death.
  bool TakeMarkerLocked(const std::string& name, absl::string_view token);
  // Whether a multi-get of the keys of every lock this store holds, asked
  // for after `held_since` and within kSharedCheckNanos (made now if none
  // is), found `token` in key `name`. False also when there is nothing to
  // share (one lock held) or the multi-get failed: the caller then asks on
  // its own.
  bool HeldPerSharedCheckLocked(const std::string& name, absl::string_view token,
                                int64_t held_since);
  // The held locks' keys, for the shared check.
  void NoteHeldLocked(const std::string& name, absl::string_view token) {
    held_.insert_or_assign(name, std::string(token));
  }
  void ForgetHeldLocked(const std::string& name, absl::string_view token) {
    auto it = held_.find(name);
    if (it != held_.end() && it->second == token) held_.erase(it);
  }
  // Before a clean release: clears the marker if it is still ours.
  void DropMarkerLocked(const std::string& name, absl::string_view token);
  void ReleaseOrphansLocked();

  const MemcachedStoreOptions options_;
  const KeyNaming naming_;
  const std::string describe_;

  std::mutex mu_;
  MemcachedConn conn_;           // guarded by mu_
  std::vector<Orphan> orphans_;  // guarded by mu_
  // Key name to token of each lock this store holds, and the last shared
  // check's answer: when it was asked for, and the values it found.
  absl::flat_hash_map<std::string, std::string> held_;          // guarded by mu_
  int64_t shared_asked_at_ = 0;                                 // guarded by mu_
  absl::flat_hash_map<std::string, std::string> shared_found_;  // guarded by mu_
};

absl::StatusOr<std::string> MemcachedStore::KeyName(const std::string& resource) const {
  absl::StatusOr<std::string> name = naming_.Name(resource);
  if (!name.ok()) return name.status();
  const size_t total = options_.prefix_key.size() + name->size();
  if (total > kMaxKeyBytes) {
    return ConfigurationError(describe_, resource,
                              absl::StrCat("memcached keys are at most ", kMaxKeyBytes,
                                           " bytes; this one would be ", total,
                                           " (use a secret= to name keys by a 64-digit "
                                           "hash)"));
  }
  for (unsigned char c : *name) {
    if (c <= 0x20 || c == 0x7f) {
      return ConfigurationError(describe_, resource,
                                "memcached keys cannot hold spaces or control bytes "
                                "(use a secret= to name keys by a 64-digit hash)");
    }
  }
  return name;
}



std::string MemcachedStore::MarkerName(const std::string& name) const {
  if (!options_.holder_record ||
      options_.prefix_key.size() + name.size() + kMarkerSuffix.size() > kMaxKeyBytes) {
    return "";
  }
  return absl::StrCat(name, kMarkerSuffix);
}

bool MemcachedStore::TakeMarkerLocked(const std::string& name, absl::string_view token) {
  const std::string marker = MarkerName(name);
  if (marker.empty()) return false;
  MemcachedFound found;
  if (conn_.Gets(marker, &found) != MEMCACHED_SUCCESS) return false;
  const bool died = found.present && !found.value.empty() && found.value != token;
  // Without expiry: it must outlive the lock key it speaks of.
  if (found.present) {
    (void)conn_.Cas(marker, token, 0, found.cas);
  } else {
    (void)conn_.Add(marker, token, 0);
  }
  return died;
}

void MemcachedStore::DropMarkerLocked(const std::string& name, absl::string_view token) {
  const std::string marker = MarkerName(name);
  if (marker.empty()) return;
  MemcachedFound found;
  if (conn_.Gets(marker, &found) != MEMCACHED_SUCCESS || !found.present ||
      found.value != token) {
    return;
  }
  (void)conn_.Cas(marker, "", 0, found.cas);
}

absl::Status MemcachedStore::ReleaseLocked(const std::string& name, absl::string_view token,
                                           absl::string_view resource, bool died) {
  // First: a death between the two leaves a released holder's key to run
  // out, a holder that had finished.
  if (!died) DropMarkerLocked(name, token);
  MemcachedFound found;
  memcached_return_t rc = conn_.Gets(name, &found);
  if (rc != MEMCACHED_SUCCESS) return conn_.Failure(rc, resource, "release (gets)", name);
  if (!found.present) {
    return LostError(describe_, resource,
                     "the lock was already gone at release: its key was evicted, "
                     "flushed, deleted or expired while held");
  }
  if (found.value != token) {
    return LostError(describe_, resource,
                     "the lock was lost before release: its key now holds another "
                     "owner's token (ours was evicted, flushed or expired, and "
                     "someone else took the lock)");
  }
  // Symfony's order. The cas succeeds only if nobody changed the key since
  // the gets, and leaves it ours for at least one more second (memcached's
  // clock ticks once a second): the delete right after it then deletes our
  // key, not one that a new owner added after ours expired. A delete that
  // reaches the server more than a second later could still remove a new
  // owner's key; nothing in memcached's commands closes that window.
  rc = conn_.Cas(name, token, kReleaseExpiry, found.cas);
  if (rc == MEMCACHED_DATA_EXISTS || rc == MEMCACHED_NOTFOUND) {
    return LostError(describe_, resource,
                     "the lock was lost during release: its key changed between "
                     "gets and cas");
  }
  if (rc != MEMCACHED_SUCCESS) return conn_.Failure(rc, resource, "release (cas)", name);
  rc = conn_.Delete(name);
  if (rc == MEMCACHED_SUCCESS || rc == MEMCACHED_NOTFOUND) return absl::OkStatus();
  // The key is ours for two more seconds at most: the release is done
  // either way.
  return conn_.Failure(rc, resource, "release (delete)", name);
}

absl::Status MemcachedStore::NameAndToken(Key& key, std::string* name,
                                          absl::string_view* token) const {
  absl::StatusOr<std::string> named = KeyName(key.resource());
  if (!named.ok()) return named.status();
  absl::StatusOr<absl::string_view> own = key.Token();
  if (!own.ok()) return own.status();
  *name = *std::move(named);
  *token = *own;
  return absl::OkStatus();
}

absl::StatusOr<MemcachedFound> MemcachedStore::GetsLocked(const Key& key, const std::string& name,
                                                          absl::string_view what) {
  if (absl::Status s = EnsureLocked(); !s.ok()) return s;
  MemcachedFound found;
  memcached_return_t rc = conn_.Gets(name, &found);
  if (rc != MEMCACHED_SUCCESS) return conn_.Failure(rc, key.resource(), what, name);
  return found;
}

absl::Status MemcachedStore::EnsureLocked() {
  bool fresh = false;
  if (absl::Status s = conn_.Ensure(&fresh); !s.ok()) return s;
  if (fresh) {
    // A forked child's copy: the parent's to retry, and the parent's locks.
    orphans_.clear();
    held_.clear();
    shared_asked_at_ = 0;
  }
  return absl::OkStatus();
}

void MemcachedStore::ReleaseOrphansLocked() {
  std::vector<Orphan> orphans;
  orphans.swap(orphans_);
  for (size_t i = 0; i < orphans.size(); ++i) {
    absl::Status s = ReleaseLocked(orphans[i].name, orphans[i].token, "");
    if (absl::IsUnavailable(s)) {
      // Still unreachable: keep this and the rest for the next call.
      for (; i < orphans.size(); ++i) orphans_.push_back(std::move(orphans[i]));
      return;
    }
  }
}

absl::StatusOr<bool> MemcachedStore::Acquire(Key& key, LockMode mode, Deadline deadline) {
  if (mode == LockMode::kShared) {
    return ConfigurationError(describe_, key.resource(),
                              "memcached locks are exclusive");
  }
  const absl::Duration ttl = key.RemainingLifetime();
  if (absl::Status s = CheckMemcachedLease(describe_, key.resource(), ttl); !s.ok()) return s;
  if (ttl <= absl::ZeroDuration()) {
    return LostError(describe_, key.resource(),
                     "the lease ran out before the lock was acquired");
  }
  const int64_t expiry = MemcachedExpiryFor(ttl);
  absl::StatusOr<std::string> name = KeyName(key.resource());
  if (!name.ok()) return name.status();
  MemcachedKeyState* held_state = state(key);
  const bool held_nothing = held_state != nullptr ? !held_state->held : !key.has_token();
  absl::StatusOr<absl::string_view> token = key.Token();
  if (!token.ok()) return token.status();

  Backoff poll(kPollFirst, kPollMax);
  Backoff reconnect(kReconnectFirst, kReconnectMax);
  bool ambiguous = false;  // an add may have stored our token, its reply lost
  int vanished = 0;        // keys that expired between add and gets, in a row
  poll.SleepIfTriedJustNow(key, deadline);
  for (;;) {
    const int64_t sent = Deadline::NowNanos();
    memcached_return_t rc;
    bool ours = false;
    {
      std::lock_guard<std::mutex> guard(mu_);
      if (absl::Status s = EnsureLocked(); !s.ok()) return s;
      if (!orphans_.empty()) ReleaseOrphansLocked();
      rc = conn_.Add(*name, *token, expiry);
      if (rc == MEMCACHED_SUCCESS) {
        ours = true;
      } else if (rc == MEMCACHED_NOTSTORED || rc == MEMCACHED_DATA_EXISTS) {
        // Someone has the key. Symfony goes on to a refresh, which succeeds
        // only if it is our own token (a second save by the holder, or an
        // add whose reply was lost).
        MemcachedFound found;
        rc = conn_.Gets(*name, &found);
        if (rc == MEMCACHED_SUCCESS && found.present && found.value == *token) {
          rc = conn_.Cas(*name, *token, expiry, found.cas);
          ours = rc == MEMCACHED_SUCCESS;
          // Changed since the gets: look again.
          if (rc == MEMCACHED_DATA_EXISTS || rc == MEMCACHED_NOTFOUND) rc = MEMCACHED_SUCCESS;
        } else if (rc == MEMCACHED_SUCCESS && !found.present && ++vanished < 3) {
          // Expired between add and gets: try the add again at once.
          continue;
        }
        if (rc == MEMCACHED_SUCCESS && !ours) rc = MEMCACHED_NOTSTORED;
      }
    }
    if (ours) {
      // The lease counts from before the request was sent, so it ends
      // before the server's expiry does.
      KeyWriter(key).ResetLifetime();
      KeyWriter(key).ReduceLifetime(ttl - absl::Nanoseconds(Deadline::NowNanos() - sent));
      KeyWriter(key).set_fence(std::nullopt);
      const bool was_held = held_state != nullptr && held_state->held;
      if (!was_held) {
        std::lock_guard<std::mutex> guard(mu_);
        KeyWriter(key).set_previous_owner_died(TakeMarkerLocked(*name, *token));
      }
      if (held_state == nullptr) held_state = &EnsureState(key);
      held_state->held = true;
      held_state->held_since = Deadline::NowNanos();
      {
        std::lock_guard<std::mutex> guard(mu_);
        NoteHeldLocked(*name, *token);
      }
      return true;
    }
    vanished = 0;
    if (rc == MEMCACHED_NOTSTORED) {
      ambiguous = false;  // the server answered: our token is not there
      if (deadline.has_passed()) return false;
      poll.Sleep(deadline);
      continue;
    }
    absl::Status failure;
    {
      std::lock_guard<std::mutex> guard(mu_);
      failure = conn_.Failure(rc, key.resource(), "acquire", *name);
      if (IsMemcachedServerTrouble(rc)) ambiguous = true;
      if ((!absl::IsUnavailable(failure) || deadline.has_passed()) && ambiguous &&
          held_nothing && orphans_.size() < kMaxOrphans) {
        // The add may have stored our token: release it once the server
        // answers again rather than leave it for a whole lease.
        orphans_.push_back(Orphan{*name, std::string(*token)});
      }
    }
    if (!absl::IsUnavailable(failure) || deadline.has_passed()) return failure;
    reconnect.Sleep(deadline);
  }
}

absl::Status MemcachedStore::Extend(Key& key, absl::Duration ttl) {
  if (absl::Status s = CheckMemcachedLease(describe_, key.resource(), ttl); !s.ok()) return s;
  if (!key.has_token()) {
    return LostError(describe_, key.resource(),
                     "cannot refresh: this key never held the lock");
  }
  const int64_t expiry = MemcachedExpiryFor(ttl);
  std::string name;
  absl::string_view token;
  if (absl::Status s = NameAndToken(key, &name, &token); !s.ok()) return s;
  std::lock_guard<std::mutex> guard(mu_);
  absl::StatusOr<MemcachedFound> found = GetsLocked(key, name, "refresh (gets)");
  if (!found.ok()) return found.status();
  // Symfony adds the key again when it finds it gone; we report the loss:
  // someone may have held the lock in between.
  if (absl::Status s = OursOrLost(key, *found, token,
                                  "cannot refresh: the lock's key is gone (evicted, flushed, "
                                  "deleted or expired)",
                                  "cannot refresh: the key holds another owner's token (the "
                                  "lock was lost and taken over)");
      !s.ok()) {
    return s;
  }
  memcached_return_t rc = conn_.Cas(name, token, expiry, found->cas);
  if (rc == MEMCACHED_DATA_EXISTS || rc == MEMCACHED_NOTFOUND) {
    return LostError(describe_, key.resource(),
                     "cannot refresh: the key changed between gets and cas");
  }
  if (rc != MEMCACHED_SUCCESS) return conn_.Failure(rc, key.resource(), "refresh (cas)", name);
  return absl::OkStatus();
}

absl::Status MemcachedStore::DoRelease(Key& key, bool died) {
  if (!key.has_token()) return absl::OkStatus();
  MemcachedKeyState* held_state = state(key);
  // A deserialized key (a token, no state) may hold the lock; a key this
  // store saw release holds nothing.
  if (held_state != nullptr && !held_state->held) return absl::OkStatus();
  if (held_state != nullptr) held_state->held = false;
  std::string name;
  absl::string_view token;
  if (absl::Status s = NameAndToken(key, &name, &token); !s.ok()) return s;
  std::lock_guard<std::mutex> guard(mu_);
  ForgetHeldLocked(name, token);
  if (absl::Status s = EnsureLocked(); !s.ok()) return s;
  absl::Status released = ReleaseLocked(name, token, key.resource(), died);
  if (absl::IsUnavailable(released) && orphans_.size() < kMaxOrphans) {
    orphans_.push_back(Orphan{name, std::string(token)});
    return Restated(released, absl::StrCat(released.message(),
                                     " (the release is retried when the server "
                                     "answers again; the lease ends it otherwise)"));
  }
  return released;
}

absl::StatusOr<bool> MemcachedStore::IsHeld(Key& key) {
  if (!key.has_token()) return false;
  std::string name;
  absl::string_view token;
  if (absl::Status s = NameAndToken(key, &name, &token); !s.ok()) return s;
  std::lock_guard<std::mutex> guard(mu_);
  absl::StatusOr<MemcachedFound> found = GetsLocked(key, name, "get");
  if (!found.ok()) return found.status();
  return found->present && found->value == token;
}

bool MemcachedStore::HeldPerSharedCheckLocked(const std::string& name, absl::string_view token,
                                              int64_t held_since) {
  const int64_t now = Deadline::NowNanos();
  if (shared_asked_at_ <= held_since || now - shared_asked_at_ >= kSharedCheckNanos) {
    if (held_.size() < 2) return false;  // nothing to share
    std::vector<std::string> names;
    names.reserve(held_.size());
    for (const auto& [held_name, held_token] : held_) names.push_back(held_name);
    shared_asked_at_ = 0;
    if (conn_.GetMany(names, &shared_found_) != MEMCACHED_SUCCESS) return false;
    shared_asked_at_ = now;
    if (shared_asked_at_ <= held_since) return false;
  }
  auto it = shared_found_.find(name);
  return it != shared_found_.end() && it->second == token;
}

absl::Status MemcachedStore::CheckHeld(Key& key) {
  if (key.IsExpired()) {
    return LostError(describe_, key.resource(),
                     "the lease ran out");
  }
  if (!key.has_token()) {
    return NotHeldError(describe_, key.resource());
  }
  std::string name;
  absl::string_view token;
  if (absl::Status s = NameAndToken(key, &name, &token); !s.ok()) return s;
  const MemcachedKeyState* held_state = state(key);
  std::lock_guard<std::mutex> guard(mu_);
  if (absl::Status s = EnsureLocked(); !s.ok()) return s;
  if (held_state != nullptr && held_state->held &&
      HeldPerSharedCheckLocked(name, token, held_state->held_since)) {
    return absl::OkStatus();
  }
  absl::StatusOr<MemcachedFound> found = GetsLocked(key, name, "check (get)");
  if (!found.ok()) return found.status();
  absl::Status ours = OursOrLost(key, *found, token,
                                 "the lock's key is gone: evicted (memcached was short of "
                                 "memory), flushed, deleted, or the server restarted",
                                 "the lock's key holds another owner's token: ours was lost "
                                 "(evicted, flushed or expired) and the lock taken over");
  if (!ours.ok()) ForgetHeldLocked(name, token);
  return ours;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewMemcachedStore(
    const MemcachedStoreOptions& options) {
  if (absl::Status s = MemcachedLibrary().Load(kMemcachedEntry.name); !s.ok()) return s;
  if (absl::Status s = CheckMemcachedOptions(options); !s.ok()) return s;
  const std::string where = absl::StrCat("memcached://", options.servers[0].host);
  absl::StatusOr<KeyNaming> naming = MemcachedKeyNaming(options, where);
  if (!naming.ok()) return naming.status();
  auto store = std::make_shared<MemcachedStore>(
      options, *std::move(naming), absl::StrCat("memcached://", MemcachedServerList(options)));
  if (absl::Status s = store->Start(); !s.ok()) return s;
  store->WarnIfNoSecret();
  return std::shared_ptr<Store>(std::move(store));
}

}  // namespace ipclock
