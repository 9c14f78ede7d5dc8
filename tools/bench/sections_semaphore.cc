// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Counting semaphores (limit 3, one permit taken and given back by a
// reused Lock) beside each store's floor: the SysV kernel count against a
// raw semop pair, slots on shm, POSIX semaphores and flock against their
// primitive and against one lock of the same store, and Redis in Symfony
// Semaphore's layout against PHP's symfony/semaphore on the same server.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "ipclock/lock.h"
#include "ipclock/stores/slot_semaphore_store.h"
#include "ipclock_rows.h"
#include "raw_peers.h"
#include "sections.h"
#include "symfony_peer.h"

namespace ipclock_bench {

namespace {

constexpr char kSection[] = "counting semaphore";

// A reused semaphore of `limit` taking one permit and giving it back.
double SemaphoreReused(const RunShape& shape, const std::string& dsn, const std::string& resource,
                       uint32_t limit, std::string* why) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(dsn);
  if (!store.ok()) {
    *why = store.status().ToString();
    return -1;
  }
  ipclock::LockOptions options;
  options.permits = limit;
  absl::StatusOr<ipclock::Lock> lock =
      ipclock::Lock::Create(ipclock::SemaphoreStoreFor(*store), resource, options);
  if (!lock.ok()) {
    *why = lock.status().ToString();
    return -1;
  }
  return MedianNsPerOp(shape, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<bool> got = lock->TryAcquire();
      if (!got.ok() || !*got) return false;
      if (!lock->Release().ok()) return false;
    }
    return true;
  });
}

// The semaphore row of `dsn`, compared with `floor` (a row of this
// section) at `goal`.
void Compare(const Settings& s, const Workspace& ws, const char* what, const std::string& dsn,
             const std::string& floor, GoalKind kind, double goal, Report* report) {
  std::string why;
  const double ns =
      SemaphoreReused(s.shape, dsn, absl::StrCat(ws.tag, ".sem.", what), 3, &why);
  Row& row = report->Add(kSection, absl::StrCat(what, ": ipclock limit 3, take+give 1 permit"),
                         ns, kNs, why);
  if (kind != GoalKind::kNone) Against(row, *report, floor, kind, goal);
}

}  // namespace

void CountingSemaphoreSection(const Settings& s, const Workspace& ws, Report* report) {
  std::fprintf(stderr, "bench: counting semaphore\n");
  const std::string semop = "semaphore: raw semop(-1)+semop(+1), SEM_UNDO";
  report->Add(kSection, semop, RawSemopPair(s.shape), kNs);
  Compare(s, ws, "semaphore", "semaphore", semop, GoalKind::kRatioAtMost, 2, report);

  const std::string mutex = "shm: raw robust mutex lock+unlock";
  report->Add(kSection, mutex, RawRobustMutexPair(s.shape), kNs);
  // Slots: the semaphore's bookkeeping (a draw, the slot keys, the slots
  // held) over one lock of the store, side by side with the primitive,
  // with no goal: the goal is the flock row's, against one lock.
  Compare(s, ws, "shm", ws.shm_dsn, mutex, GoalKind::kNone, 0, report);

  const std::string sem = "posix-semaphore: raw sem_wait+sem_post";
  report->Add(kSection, sem, RawPosixSemPair(s.shape), kNs);
  Compare(s, ws, "posix-semaphore", ws.posix_dsn, sem, GoalKind::kNone, 0, report);

  // A slot is one flock lock, tried from a random slot on: a free semaphore
  // costs one lock of the store and the draw.
  const std::string one = "flock: ipclock one lock, reused acquire+release";
  if (ReusedHandleRow(s.shape, kSection, ws.flock_dsn, one, ws.tag + ".sem.one", report)) {
    Compare(s, ws, "flock", ws.flock_dsn, one, GoalKind::kRatioAtMost, 1.5, report);
  }

  const char* redis = report->Server("IPCLOCK_TEST_REDIS", kSection);
  if (redis == nullptr) return;
  const SymfonyFigures& php = SymfonyPeerOnce(ws.dir, s.shape);
  auto it = php.ns.find("redis_semaphore_ns");
  const std::string symfony = "redis: Symfony Semaphore RedisStore acquire+release";
  report->Add(kSection, symfony, it == php.ns.end() ? -1 : it->second, kNs);
  Compare(s, ws, "redis", absl::StrCat(redis, "?secret=none"), symfony,
          GoalKind::kFasterAtLeast, 4, report);
}

}  // namespace ipclock_bench
