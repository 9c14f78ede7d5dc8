// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ZooKeeper's lock recipe ("Locks" and "Shared Locks" in the ZooKeeper
// docs), as the ZooKeeper store's default format. The layout and the rules
// are in include/ipclock/stores/zookeeper_store.h; the ordering rules in
// zookeeper_names.h.
//
// Caveats handled here:
//   * A create whose answer is lost may have made the node: each attempt
//     tags its node with a random ID, and an unanswered create has every
//     node with that tag deleted once the client reconnects. Otherwise a
//     node nobody knows of would hold the queue until the session ends.
//   * The resource node is a container: the servers may delete it whenever
//     it is empty, even between our create of it and of our child. A create
//     that finds the parent gone makes it again.
//   * Our node can vanish while we wait (the session expired, or a client
//     deleted it): the queue is joined again from the start.
//   * A waiter wakes on its blocker's deletion, on any session event, and at
//     its deadline; each wake re-reads the children, so a missed or early
//     wake costs a round trip, never a wrong grant.

#include <unistd.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/backoff.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "platform/random.h"
#include "stores/zookeeper/zookeeper_lock.h"
#include "platform/process_id.h"

namespace ipclock {

namespace {

constexpr absl::Duration kRetryFirst = absl::Milliseconds(50);
constexpr absl::Duration kRetryMax = absl::Seconds(1);
// Containers reaped under us in a row before the acquisition gives up.
constexpr int kMaxParentRetries = 10;

absl::StatusOr<std::string> RandomTag() {
  unsigned char bytes[8];
  if (absl::Status s = FillRandom(bytes, sizeof(bytes)); !s.ok()) return s;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string tag;
  for (unsigned char b : bytes) {
    tag.push_back(kHex[b >> 4]);
    tag.push_back(kHex[b & 15]);
  }
  return tag;
}

absl::string_view BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

absl::StatusOr<int> ZooKeeperStore::RecordOwner(ZkSession& session, const std::string& parent,
                                                const std::string& me, bool left_behind,
                                                absl::string_view resource) {
  const std::string path = Child(parent, kOwnerNode);
  if (left_behind) {
    ZkResult r = session.Set(path, me, -1, CallWait(session));
    if (r.rc == ZOK) return r.stat.version;
    if (!(r.answered && r.rc == ZNONODE)) return Failure(r, resource, "record the owner (set)");
  }
  ZkResult r = session.Create(path, me, *ZooKeeper().ZOO_PERSISTENT, CallWait(session));
  if (r.rc == ZOK) return r.stat.version;
  if (r.answered && r.rc == ZNODEEXISTS) {
    r = session.Set(path, me, -1, CallWait(session));
    if (r.rc == ZOK) return r.stat.version;
  }
  return Failure(r, resource, "record the owner");
}

absl::StatusOr<bool> ZooKeeperStore::WaitInQueue(ZkSession& session, const std::string& parent,
                                                 const LockChild& me, const Key& key,
                                                 Deadline deadline, bool* owner_left) {
  const absl::string_view resource = key.resource();
  // A cancelled wait leaves the queue as one whose deadline passed.
  auto over = [&]() { return deadline.has_passed() || key.cancelled(); };
  const std::string my_path = Child(parent, me.name);
  auto bell = std::make_shared<ZkBell>();
  session.ListenSession(bell);
  Backoff retry(kRetryFirst, kRetryMax);
  // Leaves the queue: our node goes now, or once the client reconnects.
  auto leave = [&]() {
    session.UnlistenSession(bell.get());
    ZkResult d = session.Delete(my_path, -1, CallWait(session));
    if (!d.answered) {
      ZkOp op;
      op.path = my_path;
      session.DeleteLater({op});
    }
  };
  for (;;) {
    ZkResult c = session.GetChildren(parent, CallWait(session));
    if (!c.answered) {
      if (session.expired()) {
        session.UnlistenSession(bell.get());
        return LostError(describe_, resource,
                         "the session expired while waiting");
      }
      if (key.cancelled()) {
        leave();
        return false;
      }
      if (deadline.has_passed()) {
        leave();
        return Failure(c, resource, "wait (children)");
      }
      retry.Sleep(deadline, key.cancel_fd());
      continue;
    }
    if (c.rc != ZOK && c.rc != ZNONODE) {
      leave();
      return Failure(c, resource, "wait (children)");
    }
    std::vector<LockChild> sorted = SortedLockChildren(c.children);
    bool found = false;
    for (const LockChild& child : sorted) found = found || child.name == me.name;
    if (!found) {
      session.UnlistenSession(bell.get());
      return LostError(describe_, resource,
                       absl::StrCat("our queued node ", my_path, " vanished (another "
                                    "client deleted it, or the session ended)"));
    }
    std::optional<LockChild> blocker = Blocker(sorted, me);
    if (!blocker) {
      session.UnlistenSession(bell.get());
      *owner_left = false;
      for (const std::string& name : c.children) *owner_left = *owner_left || name == kOwnerNode;
      return true;
    }
    if (over()) {
      leave();
      return false;
    }
    // Only the node right before us that blocks us is watched: its
    // deletion wakes us alone.
    const std::string blocker_path = Child(parent, blocker->name);
    session.Listen(blocker_path, bell);
    ZkResult e = session.Exists(blocker_path, true, CallWait(session));
    if (e.answered && e.rc == ZOK) {
      bell->Wait(deadline, key.cancel_fd());
    } else if (!e.answered) {
      retry.Sleep(deadline, key.cancel_fd());
    } else if (e.rc != ZNONODE) {
      session.Unlisten(blocker_path, bell.get());
      leave();
      return Failure(e, resource, "wait (exists)");
    }
    session.Unlisten(blocker_path, bell.get());
  }
}

absl::StatusOr<bool> ZooKeeperStore::SaveRecipe(Key& key, LockMode mode, Deadline deadline) {
  absl::StatusOr<std::string> name = NodeName(key.resource());
  if (!name.ok()) return name.status();
  const std::string parent = Child(base_, *name);
  ZkKeyState* held = state(key);
  const bool converting = held != nullptr && held->held;
  Backoff retry(kRetryFirst, kRetryMax);
  int parent_retries = 0;
  int expired_retries = 0;
  for (;;) {
    std::shared_ptr<ZkSession> session;
    if (converting) {
      session = held->session;
    } else {
      absl::StatusOr<std::shared_ptr<ZkSession>> current = CurrentSession();
      if (!current.ok()) return current.status();
      session = *std::move(current);
    }
    absl::StatusOr<std::string> tag = RandomTag();
    if (!tag.ok()) return tag.status();
    const std::string prefix = Child(parent, LockChildPrefix(mode, *tag));
    const std::string data = absl::StrCat(node_data_, CurrentPid());
    ZkResult r;
    if (converting) {
      // Our node and the owner record go, and a node of the other kind
      // joins the end of the queue, in one step: nobody ever sees the
      // resource without one of ours in between.
      std::vector<ZkOp> ops(2);
      ops[0].kind = ZkOp::Kind::kCreate;
      ops[0].path = prefix;
      ops[0].data = data;
      ops[0].mode = *ZooKeeper().ZOO_EPHEMERAL_SEQUENTIAL;
      ops[1].path = held->node;
      if (held->mode == LockMode::kExclusive && held->owner_version >= 0) {
        ZkOp owner;
        owner.path = Child(parent, kOwnerNode);
        owner.version = held->owner_version;
        ops.push_back(owner);
      }
      r = session->Multi(ops, CallWait(*session));
      // The conversion gives up the lock we held, whatever comes next.
      held->held = false;
      held->Unregister();
      if (!r.answered) {
        session->DeleteTaggedLater(parent, *tag);
        session->DeleteLater({ops[1]});
        TakeState(key);
        return Failure(r, key.resource(), "convert");
      }
      if (r.rc != ZOK) {
        TakeState(key);
        if (r.op_rcs.size() > 1 && r.op_rcs[1] == ZNONODE) {
          return LostError(describe_, key.resource(),
                           absl::StrCat("the lock node ", ops[1].path, " was gone "
                                        "before the conversion (the lock was lost)"));
        }
        return Failure(r, key.resource(), "convert");
      }
    } else {
      r = session->Create(prefix, data, *ZooKeeper().ZOO_EPHEMERAL_SEQUENTIAL, CallWait(*session));
      if (RetryOnExpiredSession(r, session, &expired_retries)) continue;
      if (r.answered && r.rc == ZNONODE && ++parent_retries <= kMaxParentRetries) {
        if (absl::Status s =
                EnsurePath(*session, parent, *ZooKeeper().ZOO_CONTAINER, key.resource());
            !s.ok()) {
          return s;
        }
        continue;
      }
      if (!r.answered) {
        session->DeleteTaggedLater(parent, *tag);
        if (key.cancelled()) return false;
        if (deadline.has_passed()) return Failure(r, key.resource(), "acquire (create)");
        retry.Sleep(deadline, key.cancel_fd());
        continue;
      }
      if (r.rc != ZOK) {
        return Failure(r, key.resource(), "acquire (create)");
      }
    }
    std::optional<LockChild> me = ParseLockChild(BaseName(r.path));
    if (!me) {
      return UnexpectedError(describe_, key.resource(),
                             absl::StrCat("the servers named our node \"", r.path,
                                          "\", which is not a lock node's name"));
    }
    int64_t czxid = r.has_stat ? r.stat.czxid : 0;
    bool owner_left = false;
    absl::StatusOr<bool> got =
        WaitInQueue(*session, parent, *me, key, deadline, &owner_left);
    if (absl::IsAborted(got.status()) && !deadline.has_passed() && !key.cancelled() &&
        !converting) {
      continue;  // our node vanished: join the queue again
    }
    if (!got.ok() || !*got) {
      if (converting) TakeState(key);
      return got;
    }
    const std::string my_path = Child(parent, me->name);
    int owner_version = -1;
    if (mode == LockMode::kExclusive) {
      if (czxid == 0) {
        ZkResult e = session->Exists(my_path, false, CallWait(*session));
        if (!(e.answered && e.rc == ZOK)) {
          session->DeleteLater({ZkOp{ZkOp::Kind::kDelete, my_path, "", 0, -1}});
          if (converting) TakeState(key);
          return Failure(e, key.resource(), "acquire (exists)");
        }
        czxid = e.stat.czxid;
      }
      absl::StatusOr<int> version =
          RecordOwner(*session, parent, me->name, owner_left, key.resource());
      if (!version.ok()) {
        // Fail closed: a lock whose owner is not recorded is given back.
        session->DeleteLater({ZkOp{ZkOp::Kind::kDelete, my_path, "", 0, -1}});
        if (converting) TakeState(key);
        return version.status();
      }
      owner_version = *version;
    } else if (czxid == 0) {
      ZkResult e = session->Exists(my_path, false, CallWait(*session));
      czxid = e.answered && e.rc == ZOK ? e.stat.czxid : 0;
    }
    ZkKeyState& st = EnsureState(key);
    st.Unregister();
    st.session = session;
    st.held = true;
    st.mode = mode;
    st.parent = parent;
    st.node = my_path;
    st.czxid = czxid;
    st.owner_version = owner_version;
    if (st.bell != nullptr) {
      // A converted lock the watch already follows: its new node.
      session->ListenSession(st.bell);
      session->Listen(st.node, st.bell);
      session->WatchNode(st.node);
    }
    KeyWriter(key).set_fence(mode == LockMode::kExclusive ? std::optional<uint64_t>(czxid)
                                               : std::nullopt);
    KeyWriter(key).set_previous_owner_died(owner_left);
    KeyWriter(key).MarkUnserializable();
    return true;
  }
}

absl::Status ZooKeeperStore::DeleteRecipe(Key& key, ZkKeyState& st, bool died) {
  ZkSession& s = *st.session;
  std::vector<ZkOp> ops(1);
  ops[0].path = st.node;
  if (st.mode == LockMode::kExclusive && st.owner_version >= 0 && !died) {
    // A clean release takes the owner record with it: the next holder must
    // not think we died.
    ZkOp owner;
    owner.path = Child(st.parent, kOwnerNode);
    owner.version = st.owner_version;
    ops.push_back(owner);
  }
  ZkResult r = ops.size() == 1 ? s.Delete(ops[0].path, -1, CallWait(s)) : s.Multi(ops, CallWait(s));
  if (r.answered && r.rc == ZOK) return absl::OkStatus();
  const bool node_gone =
      r.answered && (ops.size() == 1 ? r.rc == ZNONODE
                                     : !r.op_rcs.empty() && r.op_rcs[0] == ZNONODE);
  if (node_gone) {
    return LostError(describe_, key.resource(),
                     absl::StrCat("the lock node ", st.node, " was gone at release "
                                  "(another client deleted it, or the session ended)"));
  }
  if (r.answered && ops.size() > 1) {
    // The owner record changed (someone else wrote it): our node alone.
    ZkResult d = s.Delete(st.node, -1, CallWait(s));
    if (d.answered && d.rc == ZOK) return absl::OkStatus();
    if (d.answered && d.rc == ZNONODE) {
      return LostError(describe_, key.resource(),
                       absl::StrCat("the lock node ", st.node, " was gone at release"));
    }
    r = d;
  }
  if (!r.answered) {
    s.DeleteLater(ops);
    return UnansweredRelease(st, key.resource(), r.rc);
  }
  return Failure(r, key.resource(), "release");
}

}  // namespace ipclock
