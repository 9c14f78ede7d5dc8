// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// memcached and ZooKeeper against one round trip of their cheapest request:
// each row's ratio is its cost in round trips (memcached: acquire = add,
// release = gets + cas + delete, 4; ZooKeeper's recipe: create,
// getChildren, the owner record, and a multi-op release, 4; readers 3;
// Symfony's layout: create, then exists + delete, 3).

#include <cstdio>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cache_zk_peers.h"
#include "ipclock/lock.h"
#include "ipclock_rows.h"
#include "sections.h"

namespace ipclock_bench {

namespace {

constexpr char kNs[] = "ns/op";

std::string WithOption(const std::string& dsn, const std::string& option) {
  return absl::StrCat(dsn, absl::StrContains(dsn, "?") ? "&" : "?", option);
}

Row* StoreRow(const RunShape& shape, const std::string& section, const std::string& dsn,
              const std::string& figure, const std::string& resource, Report* report) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(dsn);
  if (!store.ok()) {
    report->notes.push_back(absl::StrCat(section, ": ", figure, " skipped: ",
                                         store.status().ToString()));
    return nullptr;
  }
  return &report->Add(section, figure, ReusedHandle(shape, *store, resource), kNs);
}

// TryAcquire(shared) + Release of one Lock kept across operations.
double ReusedShared(const RunShape& shape, const std::shared_ptr<ipclock::Store>& store,
                    const std::string& resource) {
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource);
  if (!lock.ok()) return -1;
  return MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<bool> got = lock->TryAcquire(ipclock::LockMode::kShared);
      if (!got.ok() || !*got || !lock->Release().ok()) return false;
    }
    return true;
  });
}

}  // namespace

void CacheAndZooKeeperSections(const Settings& s, const Workspace& ws, Report* report) {
  const RunShape shape = Scaled(s.shape, 50);
  if (const char* mc = report->Server("IPCLOCK_TEST_MEMCACHED", "memcached")) {
    const char* kVersion = "libmemcached version round trip";
    const char* kGet = "libmemcached get (missing key) round trip";
    std::string why;
    report->Add("memcached", kVersion, MemcachedVersion(shape, mc, &why), kNs).note = why;
    report->Add("memcached", kGet, MemcachedGetMissing(shape, mc, &why), kNs).note = why;
    if (Row* r = StoreRow(shape, "memcached", WithOption(mc, "secret=none"),
                          "ipclock acquire+release (4 round trips)", ws.tag + ".mc", report)) {
      Against(*r, *report, kGet, GoalKind::kRatioAtMost, 5);
    }
  }
  const char* zk = report->Server("IPCLOCK_TEST_ZOOKEEPER", "zookeeper");
  if (zk == nullptr) return;
  const char* kExists = "ZooKeeper C client exists() round trip";
  std::string why;
  Row& exists = report->Add("zookeeper", kExists, ZooKeeperExists(shape, zk, &why), kNs);
  exists.note = why;
  // A read is not a like-for-like floor for writes: each lock creates and
  // deletes a node, two writes the leader syncs to its log. The recipe's
  // floor is those two writes and its two reads.
  why.clear();
  Row& writes = report->Add("zookeeper", "ZooKeeper C client create+delete of an ephemeral node",
                            ZooKeeperCreateDelete(shape, zk, &why), kNs);
  writes.note = why;
  const char* kRecipeFloor = "floor, recipe: create+delete + 2 exists()";
  const double recipe_floor =
      writes.value > 0 && exists.value > 0 ? writes.value + 2 * exists.value : -1;
  report->Add("zookeeper", kRecipeFloor, recipe_floor, kNs);
  if (Row* r = StoreRow(shape, "zookeeper", WithOption(zk, "secret=none"),
                        "ipclock acquire+release, recipe (4 round trips)", ws.tag + ".zk",
                        report)) {
    Against(*r, *report, kExists, GoalKind::kRatioAtMost, 5);
    Row copy = *r;
    Row& vs = report->Add("zookeeper", copy.figure, copy.value, kNs);
    Against(vs, *report, kRecipeFloor, GoalKind::kRatioAtMost, 1.3);
  }
  absl::StatusOr<std::shared_ptr<ipclock::Store>> recipe = OpenStore(WithOption(zk, "secret=none"));
  if (recipe.ok()) {
    Row& r = report->Add("zookeeper", "ipclock shared acquire+release, recipe (3 round trips)",
                         ReusedShared(shape, *recipe, ws.tag + ".zkr"), kNs);
    Against(r, *report, kExists, GoalKind::kRatioAtMost, 4);
  }
  if (Row* r = StoreRow(shape, "zookeeper", WithOption(zk, "format=symfony&secret=none"),
                        "ipclock acquire+release, format=symfony (3 round trips)",
                        ws.tag + ".zks", report)) {
    Against(*r, *report, kExists, GoalKind::kRatioAtMost, 4);
  }
}

}  // namespace ipclock_bench
