// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list` on a ZooKeeper store: reads the lock nodes under the DSN's
// path with a short session of its own, creating nothing. Recipe format:
// each resource node's holders (the leading readers, or the first writer),
// the number of waiters behind them, and an owner record that no holder
// explains ("holder died": the next holder will be told). Symfony format:
// every ephemeral node under the path.
//
// The resource is read back from the node name (recipe names decode
// exactly; a Symfony name with a SHA-1 suffix stands for a resource that
// had '/' in it, which the name alone cannot restore), and is empty when
// names are HMACs (secret=). The pid is the one the holder wrote into its
// node when it is on this host; the fence is the node's creation zxid; a
// node's ctime is when it queued: a waiter's wait began then, and a
// holder that waited took the lock later.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "core/key_naming.h"
#include "stores/holder_note/holder_note.h"
#include "stores/zookeeper/zookeeper_names.h"
#include "stores/zookeeper/zookeeper_session.h"
#include "stores/zookeeper/zookeeper_store.h"

namespace ipclock {

namespace {

struct Lister {
  ZkSession& session;
  std::string describe;
  std::string host;
  std::string prefix;  // naming prefix, stripped from names read back
  bool hashed = false;
  absl::Duration wait;

  void FillHolder(const std::string& data, HeldLock* lock) const {
    FillFromHolderNote(data, host, lock);
  }

  std::string ResourceOf(const std::string& name) const {
    if (hashed) return "";
    absl::string_view n = name;
    if (!absl::ConsumePrefix(&n, prefix)) return "";
    return std::string(n);
  }

  void FillStat(const struct Stat& stat, HeldLock* lock) const {
    lock->since = stat.ctime / 1000;
    lock->since_source = "node ctime: made when it queued, so the lock was taken then or later";
    lock->number_details.emplace_back("session", stat.ephemeralOwner);
  }

  absl::Status ListRecipe(const std::string& base, const std::string& node,
                          std::vector<HeldLock>* out) const {
    const std::string parent = absl::StrCat(base, "/", node);
    ZkResult c = session.GetChildren(parent, wait);
    if (c.rc == ZNONODE) return absl::OkStatus();
    if (c.rc != ZOK) {
      return TransientError(describe, "",
                            absl::StrCat("list ", parent, ": ", ZkErrorText(c.rc)));
    }
    std::optional<std::string> decoded = DecodeResourceNode(node);
    const std::string resource = decoded ? ResourceOf(*decoded) : "";
    std::vector<LockChild> sorted = SortedLockChildren(c.children);
    const size_t holders = HolderCount(sorted);
    bool owner_left = false;
    for (const std::string& child : c.children) owner_left = owner_left || child == kOwnerNode;
    std::string recorded_owner;
    if (owner_left) {
      ZkResult o = session.Get(absl::StrCat(parent, "/", kOwnerNode), wait);
      if (o.rc == ZOK) recorded_owner = o.data;
    }
    bool owner_explained = !owner_left;
    // The nodes queued behind the holders, each made when its wait began.
    std::vector<LockWaiter> waiting;
    for (size_t i = holders; i < sorted.size(); ++i) {
      ZkResult g = session.Get(absl::StrCat(parent, "/", sorted[i].name), wait);
      if (g.rc != ZOK) continue;  // gone meanwhile: it waits no more
      LockWaiter w = WaiterFromNote(g.data, host);
      w.mode = sorted[i].mode == LockMode::kExclusive ? "exclusive" : "shared";
      w.since = g.stat.ctime / 1000;
      waiting.push_back(std::move(w));
    }
    for (size_t i = 0; i < holders; ++i) {
      const std::string path = absl::StrCat(parent, "/", sorted[i].name);
      ZkResult g = session.Get(path, wait);
      if (g.rc != ZOK) continue;  // released meanwhile
      HeldLock lock;
      lock.resource = resource;
      lock.object = path;
      lock.lock = parent;
      lock.mode = sorted[i].mode == LockMode::kExclusive ? "exclusive" : "shared";
      FillStat(g.stat, &lock);
      if (sorted[i].mode == LockMode::kExclusive) lock.fence = g.stat.czxid;
      lock.waiters = static_cast<int64_t>(sorted.size() - holders);
      lock.waiter_list = waiting;
      FillHolder(g.data, &lock);
      owner_explained = owner_explained || recorded_owner == sorted[i].name;
      out->push_back(std::move(lock));
    }
    if (!owner_explained) {
      HeldLock lock;
      lock.resource = resource;
      lock.object = absl::StrCat(parent, "/", kOwnerNode);
      lock.lock = parent;
      lock.mode = "holder died";
      lock.waiters = static_cast<int64_t>(sorted.size() - holders);
      lock.waiter_list = waiting;
      lock.text_details.emplace_back("last_holder", recorded_owner);
      out->push_back(std::move(lock));
    }
    return absl::OkStatus();
  }

  absl::Status ListSymfony(const std::string& base, const std::string& node,
                           std::vector<HeldLock>* out) const {
    const std::string path = absl::StrCat(base, "/", node);
    ZkResult g = session.Get(path, wait);
    if (g.rc != ZOK || g.stat.ephemeralOwner == 0) return absl::OkStatus();
    HeldLock lock;
    // A name ending in "-" + 40 hex digits stands for a resource with '/'.
    const bool digest = node.size() > 41 && node[node.size() - 41] == '-' &&
                        node.find_first_not_of("0123456789abcdef", node.size() - 40) ==
                            std::string::npos;
    lock.resource = digest ? "" : ResourceOf(node);
    lock.object = path;
    lock.mode = "exclusive";
    lock.fence = g.stat.czxid;
    FillStat(g.stat, &lock);
    out->push_back(std::move(lock));
    return absl::OkStatus();
  }
};

}  // namespace

absl::StatusOr<HeldLocks> ListZooKeeperLocks(Dsn& dsn, const ListRequest& request) {
  absl::StatusOr<ZooKeeperStoreOptions> options = ZooKeeperOptionsFromDsn(dsn);
  if (!options.ok()) return options.status();
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  const bool symfony = options->format == ZooKeeperStoreOptions::Format::kSymfony;
  std::string base = options->path.empty() ? (symfony ? "/" : "/ipclock") : options->path;
  while (!base.empty() && base.back() == '/') base.pop_back();
  ZkSession::Settings settings;
  settings.servers = options->servers;
  settings.session_timeout = options->session_timeout;
  settings.connect_timeout = options->connect_timeout;
  settings.describe = absl::StrCat("zookeeper://", options->servers, base.empty() ? "/" : base);
  absl::StatusOr<std::shared_ptr<ZkSession>> session = ZkSession::Open(settings);
  if (!session.ok()) return session.status();
  Lister lister{**session, settings.describe, "", options->name_prefix,
                !options->secret.empty(), (*session)->timeout()};
  lister.host = LocalHostName();

  std::vector<std::string> nodes;
  if (request.resource) {
    // Only this resource's node (its name, as the store makes it; a hashed
    // name cannot be computed here without the secret, which the DSN has).
    absl::StatusOr<std::string> name = [&]() -> absl::StatusOr<std::string> {
      KeyNamingOptions naming_options;
      naming_options.prefix = options->name_prefix;
      naming_options.secret = options->secret;
      naming_options.secret_none = true;
      absl::StatusOr<KeyNaming> naming = KeyNaming::Create(naming_options, settings.describe);
      if (!naming.ok()) return naming.status();
      return naming->Name(*request.resource);
    }();
    if (!name.ok()) return name.status();
    nodes.push_back(symfony ? SymfonyNodeName(*name) : EncodeResourceNode(*name));
  } else {
    ZkResult c = (*session)->GetChildren(base.empty() ? "/" : base, lister.wait);
    if (c.rc == ZNONODE) return HeldLocks{settings.describe, {}, {}};
    if (c.rc != ZOK) {
      return TransientError(settings.describe, "",
                            absl::StrCat("list ", base.empty() ? "/" : base, ": ",
                                         ZkErrorText(c.rc)));
    }
    nodes = std::move(c.children);
  }
  std::vector<HeldLock> out;
  for (const std::string& node : nodes) {
    if (base.empty() && node == "zookeeper") continue;
    absl::Status s = symfony ? lister.ListSymfony(base, node, &out)
                             : lister.ListRecipe(base, node, &out);
    if (!s.ok()) return s;
  }
  return HeldLocks{settings.describe, std::move(out), {}};
}

}  // namespace ipclock
