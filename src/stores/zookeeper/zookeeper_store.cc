// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ZooKeeperStore: sessions, checks of held locks, and Symfony's layout. The
// lock recipe is in zookeeper_recipe.cc; the contract in
// include/ipclock/stores/zookeeper_store.h.

#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/backoff.h"
#include "core/capability_flags.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "stores/holder_note/holder_note.h"
#include "stores/zookeeper/zookeeper_lock.h"
#include "stores/zookeeper/zookeeper_store.h"
#include "platform/process_id.h"

namespace ipclock {

namespace {

constexpr absl::Duration kRetryFirst = absl::Milliseconds(50);
constexpr absl::Duration kRetryMax = absl::Seconds(1);
// The longest a check of a held lock waits for the servers' answer: the
// watch's thread serves every lock of the process.
constexpr absl::Duration kCheckWait = absl::Seconds(1);

int64_t Now() { return Deadline::NowNanos(); }

std::string SessionName(const ZkSession& s) {
  return absl::StrCat("0x", absl::Hex(s.id()));
}

}  // namespace

ZkKeyState::~ZkKeyState() { Unregister(); }

void ZkKeyState::Unregister() {
  // A forked child's copy of the session must not be touched: its mutex may
  // have been copied held by one of the parent's client threads.
  if (bell == nullptr || session == nullptr || session->pid() != CurrentPid()) return;
  session->Unlisten(node, bell.get());
  session->UnlistenSession(bell.get());
}

ZooKeeperStore::ZooKeeperStore(const ZooKeeperStoreOptions& options, KeyNaming naming)
    : options_(options), naming_(std::move(naming)) {
  std::string path = options_.path;
  if (path.empty()) path = symfony() ? "/" : "/ipclock";
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  base_ = path == "/" ? "" : path;
  describe_ = absl::StrCat("zookeeper://", options_.servers, base_.empty() ? "/" : base_,
                           symfony() ? " (format=symfony)" : "");
  node_data_ = HolderNotePrefix();
}

Capabilities ZooKeeperStore::capabilities() const { return ZooKeeperCapabilities(options_); }

Capabilities ZooKeeperCapabilities(const ZooKeeperStoreOptions& options) {
  const bool symfony = options.format == ZooKeeperStoreOptions::Format::kSymfony;
  // Waits sleep until a watch fires: on the predecessor (recipe), or on
  // the node (symfony, where every waiter wakes). Locks live as long as the
  // session (not expiring) and are tied to it (not serializable); the
  // fencing token is the node's creation zxid.
  return MakeCapabilities(kZooKeeperEntry.scope,
                          kCanBlock | kCanFence | kCanCancel |
                              When(!symfony, kCanShare | kSeesOwnerDeath));
}

absl::StatusOr<std::string> ZooKeeperStore::NodeName(absl::string_view resource) const {
  absl::StatusOr<std::string> name = naming_.Name(resource);
  if (!name.ok()) return name.status();
  if (!symfony()) return EncodeResourceNode(*name);
  std::string node = SymfonyNodeName(*name);
  if (absl::Status s = ValidZooKeeperName(node, base_.empty()); !s.ok()) {
    return ConfigurationError(describe_, resource,
                              absl::StrCat("format=symfony cannot name this resource: ",
                                           s.message(), " (the recipe format, or a secret=, "
                                           "takes any name)"));
  }
  return node;
}

std::string ZooKeeperStore::Child(const std::string& parent, absl::string_view name) const {
  return absl::StrCat(parent, "/", name);
}

absl::Status ZooKeeperStore::Failure(const ZkResult& r, absl::string_view resource,
                                     absl::string_view what) const {
  StoreErrorMaker fault = UnexpectedError;
  if (!r.answered || r.rc == ZCONNECTIONLOSS || r.rc == ZOPERATIONTIMEOUT ||
      r.rc == ZSESSIONEXPIRED || r.rc == ZINVALIDSTATE || r.rc == ZCLOSING ||
      r.rc == ZSESSIONMOVED || r.rc == ZTHROTTLEDOP) {
    fault = TransientError;
  } else if (r.rc == ZNOAUTH || r.rc == ZAUTHFAILED) {
    fault = RefusedError;
  } else if (r.rc == ZBADARGUMENTS || r.rc == ZINVALIDACL) {
    fault = ConfigurationError;
  }
  return fault(describe_, resource, absl::StrCat(what, ": ", ZkErrorText(r.rc)));
}

absl::StatusOr<std::shared_ptr<ZkSession>> ZooKeeperStore::CurrentSession() {
  std::lock_guard<std::mutex> guard(mu_);
  // A forked child never uses its parent's session; a session the servers
  // expired never comes back.
  if (session_ != nullptr && (session_->pid() != CurrentPid() || session_->expired())) {
    session_.reset();
  }
  if (session_ == nullptr) {
    ZkSession::Settings settings;
    settings.servers = options_.servers;
    settings.session_timeout = options_.session_timeout;
    settings.connect_timeout = options_.connect_timeout;
    settings.describe = describe_;
    absl::StatusOr<std::shared_ptr<ZkSession>> s = ZkSession::Open(settings);
    if (!s.ok()) return s.status();
    session_ = *std::move(s);
  }
  return session_;
}

bool ZooKeeperStore::RetryOnExpiredSession(const ZkResult& r,
                                           const std::shared_ptr<ZkSession>& session,
                                           int* retries) {
  // The client reports ZSESSIONEXPIRED as not answered (the request may
  // not have reached the servers), but what it names is certain: the
  // session is over, so nothing the request asked for can exist.
  if (r.rc != ZSESSIONEXPIRED || *retries >= kMaxExpiredRetries) return false;
  ++*retries;
  std::lock_guard<std::mutex> guard(mu_);
  if (session_ == session) session_.reset();
  return true;
}

absl::Status ZooKeeperStore::EnsurePath(ZkSession& session, const std::string& path,
                                        int last_mode, absl::string_view resource) {
  std::string prefix;
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::StrAppend(&prefix, "/", parts[i]);
    const int mode = i + 1 == parts.size() ? last_mode : *ZooKeeper().ZOO_PERSISTENT;
    ZkResult r = session.Create(prefix, "", mode, CallWait(session));
    if (r.rc != ZOK && r.rc != ZNODEEXISTS) {
      return Failure(r, resource, absl::StrCat("create ", prefix));
    }
  }
  return absl::OkStatus();
}

absl::Status ZooKeeperStore::Start() {
  absl::StatusOr<std::shared_ptr<ZkSession>> session = CurrentSession();
  if (!session.ok()) return session.status();
  if (base_.empty()) return absl::OkStatus();
  return EnsurePath(**session, base_, *ZooKeeper().ZOO_PERSISTENT, "");
}

absl::Status ZooKeeperStore::SessionVerdict(const ZkKeyState& st,
                                            absl::string_view resource) const {
  const ZkSession& s = *st.session;
  if (s.expired()) {
    return LostError(describe_, resource,
                     absl::StrCat("the ZooKeeper session ", SessionName(s),
                                  " expired: the servers deleted its ephemeral "
                                  "nodes, this lock's ", st.node, " among them"));
  }
  const int64_t now = Now();
  const absl::Duration silent = absl::Nanoseconds(now - s.LastAnsweredSendNanos());
  if (now >= s.EarliestExpiryNanos()) {
    return LostError(
        describe_, resource,
        absl::StrCat("no answer from the ZooKeeper servers for ",
                     absl::FormatDuration(absl::Trunc(silent, absl::Milliseconds(1))),
                     ", longer than the session timeout (",
                     absl::FormatDuration(s.timeout()), "): the servers have expired "
                     "session ", SessionName(s), " or are about to, and its lock "
                     "node ", st.node, " with it"));
  }
  return TransientError(
      describe_, resource,
      absl::StrCat(s.connected() ? "no answer from" : "disconnected from",
                   " the ZooKeeper servers for ",
                   absl::FormatDuration(absl::Trunc(silent, absl::Milliseconds(1))),
                   "; the session and the lock outlive the disconnection until "
                   "the session timeout (",
                   absl::FormatDuration(s.timeout()), ") passes without an answer"));
}

absl::Status ZooKeeperStore::UnansweredRelease(const ZkKeyState& st, absl::string_view resource,
                                               int rc) const {
  absl::Status verdict = SessionVerdict(st, resource);
  if (absl::IsAborted(verdict)) return verdict;
  return TransientError(describe_, resource,
                        absl::StrCat("release: ", ZkErrorText(rc), " (the release is "
                                     "retried when the connection is back; the session's "
                                     "end removes the node otherwise)"));
}

absl::Status ZooKeeperStore::CheckHeld(Key& key) {
  ZkKeyState* st = state(key);
  if (st == nullptr || !st->held) {
    return NotHeldError(describe_, key.resource());
  }
  if (st->session->pid() != CurrentPid()) {
    return MisuseError(describe_, key.resource(),
                       "this lock belongs to the session of the process that "
                       "acquired it, not to this forked child");
  }
  // Drained first: an event from now on leaves the descriptor readable.
  if (st->bell != nullptr) st->bell->DrainSignal();
  ZkSession& s = *st->session;
  if (s.expired()) return SessionVerdict(*st, key.resource());
  if (s.connected()) {
    const bool watch = st->bell != nullptr;
    if (watch) s.Listen(st->node, st->bell);
    ZkResult r = s.Exists(st->node, watch, std::min(kCheckWait, s.timeout() / 3));
    if (r.answered) {
      if (r.rc == ZOK && r.stat.czxid == st->czxid) return absl::OkStatus();
      if (r.rc == ZOK) {
        return LostError(describe_, key.resource(),
                         absl::StrCat("the lock node ", st->node, " was deleted and "
                                      "made again by another holder"));
      }
      if (r.rc == ZNONODE) {
        return LostError(describe_, key.resource(),
                         absl::StrCat("the lock node ", st->node, " is gone: another "
                                      "client deleted it, or the session ended"));
      }
      return Failure(r, key.resource(), "check (exists)");
    }
  }
  return SessionVerdict(*st, key.resource());
}

WatchTargets ZooKeeperStore::GetWatchTargets(Key& key) {
  WatchTargets targets;
  ZkKeyState* st = state(key);
  if (st == nullptr || !st->held || st->session->pid() != CurrentPid()) return targets;
  if (st->bell == nullptr) {
    auto bell = std::make_shared<ZkBell>();
    // Without a descriptor the watch still checks at its interval.
    if (!bell->EnableSignal().ok()) return targets;
    st->bell = bell;
    st->session->ListenSession(bell);
    st->session->Listen(st->node, bell);
    st->session->WatchNode(st->node);
  }
  const int fd = st->bell->signal_fd();
  if (fd >= 0) {
    targets.poll_fds.push_back(fd);
    // The node's deletion fires the watch that each check sets again, and
    // a disconnection or an expiry is a session event: both ring the bell.
    targets.poll_fds_tell_all = true;
  }
  return targets;
}

absl::StatusOr<bool> ZooKeeperStore::IsHeld(Key& key) {
  ZkKeyState* st = state(key);
  if (st == nullptr || !st->held || st->session->pid() != CurrentPid()) return false;
  if (st->session->expired()) return false;
  ZkResult r = st->session->Exists(st->node, false, CallWait(*st->session));
  if (!r.answered) return Failure(r, key.resource(), "exists");
  return r.rc == ZOK && r.stat.czxid == st->czxid;
}

absl::StatusOr<bool> ZooKeeperStore::Acquire(Key& key, LockMode mode, Deadline deadline) {
  if (ZkKeyState* st = state(key); st != nullptr && st->held) {
    if (st->session->pid() != CurrentPid() || st->session->expired()) {
      // Inherited from a parent, or lost with its session: not ours to use.
      st->Unregister();
      TakeState(key);
    } else if (st->mode == mode) {
      return true;
    }
  }
  if (symfony()) {
    if (mode == LockMode::kShared) {
      return ConfigurationError(describe_, key.resource(),
                                "format=symfony has no shared locks");
    }
    return SaveSymfony(key, deadline);
  }
  return SaveRecipe(key, mode, deadline);
}

absl::Status ZooKeeperStore::DoRelease(Key& key, bool died) {
  ZkKeyState* st = state(key);
  if (st == nullptr || !st->held) return absl::OkStatus();
  std::unique_ptr<ZkKeyState> owned = TakeState(key);
  owned->held = false;
  if (owned->session->pid() != CurrentPid()) {
    // The parent's lock: it releases it, not a forked child.
    return absl::OkStatus();
  }
  owned->Unregister();
  if (owned->session->expired()) return SessionVerdict(*owned, key.resource());
  return symfony() ? DeleteSymfony(key, *owned) : DeleteRecipe(key, *owned, died);
}

// --- format=symfony ------------------------------------------------------------------

absl::StatusOr<bool> ZooKeeperStore::SaveSymfony(Key& key, Deadline deadline) {
  absl::StatusOr<std::string> name = NodeName(key.resource());
  if (!name.ok()) return name.status();
  const std::string path = Child(base_, *name);
  absl::StatusOr<absl::string_view> token = key.Token();
  if (!token.ok()) return token.status();
  Backoff retry(kRetryFirst, kRetryMax);
  auto bell = std::make_shared<ZkBell>();
  int expired_retries = 0;
  for (;;) {
    absl::StatusOr<std::shared_ptr<ZkSession>> session = CurrentSession();
    if (!session.ok()) return session.status();
    ZkSession& s = **session;
    ZkResult r = s.Create(path, *token, *ZooKeeper().ZOO_EPHEMERAL, CallWait(s));
    if (RetryOnExpiredSession(r, *session, &expired_retries)) continue;
    if (r.rc == ZNONODE && r.answered) {
      if (absl::Status e = EnsurePath(s, base_, *ZooKeeper().ZOO_PERSISTENT, key.resource());
          !e.ok()) {
        return e;
      }
      continue;
    }
    int64_t czxid = r.rc == ZOK ? r.stat.czxid : 0;
    if (r.rc == ZNODEEXISTS || !r.answered) {
      // Held by someone, or our create's answer was lost: Symfony's own
      // check, the node's data against our token, tells.
      ZkResult g = s.Get(path, CallWait(s));
      if (g.answered && g.rc == ZOK && g.data == *token) {
        czxid = g.stat.czxid;
      } else if (g.answered && g.rc == ZNONODE) {
        continue;
      } else if (g.answered && g.rc == ZOK) {
        if (deadline.has_passed() || key.cancelled()) return false;
        s.Listen(path, bell);
        s.ListenSession(bell);
        ZkResult e = s.Exists(path, true, CallWait(s));
        if (e.answered && e.rc == ZOK) bell->Wait(deadline, key.cancel_fd());
        s.Unlisten(path, bell.get());
        s.UnlistenSession(bell.get());
        continue;
      } else {
        if (!r.answered) s.DeleteIfDataLater(path, std::string(*token));
        if (key.cancelled()) return false;
        if (deadline.has_passed()) return Failure(g.answered ? g : r, key.resource(), "acquire");
        retry.Sleep(deadline, key.cancel_fd());
        continue;
      }
    } else if (r.rc != ZOK) {
      return Failure(r, key.resource(), "acquire (create)");
    }
    ZkKeyState& st = EnsureState(key);
    st.session = *session;
    st.held = true;
    st.mode = LockMode::kExclusive;
    st.parent = base_;
    st.node = path;
    st.czxid = czxid;
    KeyWriter(key).set_fence(static_cast<uint64_t>(czxid));
    KeyWriter(key).set_previous_owner_died(false);
    KeyWriter(key).MarkUnserializable();
    return true;
  }
}

absl::Status ZooKeeperStore::DeleteSymfony(Key& key, ZkKeyState& st) {
  ZkSession& s = *st.session;
  // Symfony checks the node is ours, then deletes it. The check here is its
  // creation zxid; a node deleted and made again by another holder between
  // the two requests would be deleted: ZooKeeper's delete can compare only
  // the data version, which is 0 for every holder's node.
  ZkResult e = s.Exists(st.node, false, CallWait(s));
  if (e.answered && (e.rc == ZNONODE || (e.rc == ZOK && e.stat.czxid != st.czxid))) {
    return LostError(describe_, key.resource(),
                     absl::StrCat("the lock node ", st.node, " was gone at release "
                                  "(another client deleted it, or the session ended)"));
  }
  ZkResult d = e.answered && e.rc == ZOK ? s.Delete(st.node, e.stat.version, CallWait(s)) : e;
  if (d.answered && d.rc == ZOK) return absl::OkStatus();
  if (d.answered && (d.rc == ZNONODE || d.rc == ZBADVERSION)) {
    return LostError(describe_, key.resource(),
                     absl::StrCat("the lock node ", st.node, " changed during release"));
  }
  if (!d.answered) {
    absl::StatusOr<absl::string_view> token = key.Token();
    if (token.ok()) s.DeleteIfDataLater(st.node, std::string(*token));
    return UnansweredRelease(st, key.resource(), d.rc);
  }
  return Failure(d, key.resource(), "release (delete)");
}

}  // namespace ipclock
