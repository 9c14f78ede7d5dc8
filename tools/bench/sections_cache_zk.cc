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

#include "cache_zk_peers.h"
#include "ipclock/lock.h"
#include "ipclock_rows.h"
#include "sections.h"

namespace ipclock_bench {

void CacheAndZooKeeperSections(const Settings& s, const Workspace& ws, Report* report) {
  const RunShape shape = Scaled(s.shape, 50);
  if (const char* mc = report->Server("IPCLOCK_TEST_MEMCACHED", "memcached")) {
    const char* kVersion = "libmemcached version round trip";
    const char* kGet = "libmemcached get (missing key) round trip";
    std::string why;
    report->Add("memcached", kVersion, MemcachedVersion(shape, mc, &why), kNs, why);
    report->Add("memcached", kGet, MemcachedGetMissing(shape, mc, &why), kNs, why);
    if (Row* r = ReusedHandleRow(shape, "memcached", WithOption(mc, "secret=none"),
                                 "ipclock acquire+release (4 round trips)", ws.tag + ".mc",
                                 report)) {
      Against(*r, *report, kGet, GoalKind::kRatioAtMost, 5);
    }
  }
  const char* zk = report->Server("IPCLOCK_TEST_ZOOKEEPER", "zookeeper");
  if (zk == nullptr) return;
  const char* kExists = "ZooKeeper C client exists() round trip";
  std::string why;
  Row& exists = report->Add("zookeeper", kExists, ZooKeeperExists(shape, zk, &why), kNs, why);
  // A read is not a like-for-like floor for writes: each lock creates and
  // deletes a node, two writes the leader syncs to its log. The recipe's
  // floor is those two writes and its two reads.
  why.clear();
  Row& writes = report->Add("zookeeper", "ZooKeeper C client create+delete of an ephemeral node",
                            ZooKeeperCreateDelete(shape, zk, &why), kNs, why);
  const char* kRecipeFloor = "floor, recipe: create+delete + 2 exists()";
  const double recipe_floor =
      writes.value > 0 && exists.value > 0 ? writes.value + 2 * exists.value : -1;
  report->Add("zookeeper", kRecipeFloor, recipe_floor, kNs);
  if (Row* r = ReusedHandleRow(shape, "zookeeper", WithOption(zk, "secret=none"),
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
                         ReusedHandle(shape, *recipe, ws.tag + ".zkr", ipclock::LockMode::kShared),
                         kNs);
    Against(r, *report, kExists, GoalKind::kRatioAtMost, 4);
  }
  if (Row* r = ReusedHandleRow(shape, "zookeeper", WithOption(zk, "format=symfony&secret=none"),
                               "ipclock acquire+release, format=symfony (3 round trips)",
                               ws.tag + ".zks", report)) {
    Against(*r, *report, kExists, GoalKind::kRatioAtMost, 4);
  }
}

}  // namespace ipclock_bench
