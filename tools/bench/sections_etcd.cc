// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// etcd against its own round trips, measured in the same run with a bare
// socket (etcd_peers.h). An exclusive acquire+release is two transactions,
// each a write the cluster commits: its floor is those same transactions
// sent over the socket (the client's own cost is the ratio), and beside it
// the least any lock on etcd writes, a put and a delete (the owner record,
// which concurrency.Mutex does not keep, is the difference). A shared one
// writes no record. Skipped with a note when IPCLOCK_TEST_ETCD is unset.

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "etcd_peers.h"
#include "ipclock/lock.h"
#include "ipclock_rows.h"
#include "sections.h"

namespace ipclock_bench {

void EtcdSection(const Settings& s, const Workspace& ws, Report* report) {
  const char* etcd = report->Server("IPCLOCK_TEST_ETCD", "etcd");
  if (etcd == nullptr) return;
  const RunShape shape = Scaled(s.shape, 50);
  std::string why;
  const char* kRange = "etcd gateway range round trip (raw HTTP/1.1)";
  report->Add("etcd", kRange, EtcdRange(shape, etcd, &why), kNs, why);
  why.clear();
  const char* kWrites = "etcd gateway put-if-absent txn + delete (raw HTTP/1.1)";
  report->Add("etcd", kWrites, EtcdPutDelete(shape, etcd, &why), kNs, why);
  why.clear();
  const char* kReplay = "the store's two lock transactions (raw HTTP/1.1)";
  report->Add("etcd", kReplay, EtcdLockTransactions(shape, etcd, &why), kNs, why);
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store =
      OpenStore(absl::StrCat(etcd, "/ipclock-bench"));
  if (!store.ok()) {
    report->notes.push_back(absl::StrCat("etcd: ipclock rows skipped: ", store.status().ToString()));
    return;
  }
  Row& excl = report->Add("etcd", "ipclock acquire+release (2 transactions)",
                          ReusedHandle(shape, *store, ws.tag + ".etcd"),
                          kNs);
  Against(excl, *report, kReplay, GoalKind::kRatioAtMost, 1.15);
  Row copy = excl;
  Row& vs_writes = report->Add("etcd", copy.figure, copy.value, kNs);
  Against(vs_writes, *report, kWrites, GoalKind::kRatioAtMost, 2);
  Row& shared = report->Add("etcd", "ipclock shared acquire+release (2 transactions)",
                            ReusedHandle(shape, *store, ws.tag + ".etcds",
                                         ipclock::LockMode::kShared),
                            kNs);
  Against(shared, *report, kWrites, GoalKind::kRatioAtMost, 1.3);
}

}  // namespace ipclock_bench
