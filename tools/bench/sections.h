// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The benchmark's sections. Each measures one store (or one cross-store
// question) and adds its rows, with their floors and goals, to the report.

#ifndef IPCLOCK_TOOLS_BENCH_SECTIONS_H_
#define IPCLOCK_TOOLS_BENCH_SECTIONS_H_

#include <string>

#include "report.h"
#include "settings.h"
#include "workspace.h"

namespace ipclock_bench {

// sections_local.cc
void ShmSection(const Settings& s, const Workspace& ws, Report* report);
void FlockSection(const Settings& s, const Workspace& ws, Report* report);
void SemaphoreSections(const Settings& s, const Workspace& ws, Report* report);
// sections_remote.cc: skipped with a note when the env var is unset.
void RemoteSections(const Settings& s, const Workspace& ws, Report* report);
// sections_sql.cc: the SQL stores; skipped with a note when unset.
void SqlSections(const Settings& s, const Workspace& ws, Report* report);
// sections_cache_zk.cc: memcached and ZooKeeper, each skipped with a note
// when its env var is unset.
void CacheAndZooKeeperSections(const Settings& s, const Workspace& ws, Report* report);
// sections_etcd.cc: skipped with a note when IPCLOCK_TEST_ETCD is unset.
void EtcdSection(const Settings& s, const Workspace& ws, Report* report);
// sections_watch.cc: a LockWatch's idle CPU cost, 100 held locks of each
// store; the remote rows skipped with a note when their env var is unset.
void WatchIdleSection(const Settings& s, const Workspace& ws, Report* report);
// sections_cross.cc
void HandoffSection(const Settings& s, const Workspace& ws, Report* report);
void ScalingSection(const Settings& s, const Workspace& ws, Report* report);
void MemorySection(const Workspace& ws, const std::string& example, Report* report);
// sections_fairness.cc: waits of looping processes, fair=true beside the
// default and the kernel primitive; the priority inversion (skipped with a
// note where SCHED_FIFO is refused).
void FairnessSection(const Settings& s, const Workspace& ws, Report* report);
void InversionSection(const Settings& s, const Workspace& ws, Report* report);
// sections_semaphore.cc: counting semaphores beside each store's floor;
// the Redis rows skipped with a note when IPCLOCK_TEST_REDIS is unset.
void CountingSemaphoreSection(const Settings& s, const Workspace& ws, Report* report);
// sections_startup.cc: whole programs, exec() to exit, beside flock(1) and
// beside a C program without ipclock.
void StartupSection(const Settings& s, const Workspace& ws, Report* report);

// Sets a row's floor and goal.
void Against(Row& row, const Report& report, const std::string& floor_figure,
             GoalKind goal, double limit);

}  // namespace ipclock_bench

#endif  // IPCLOCK_TOOLS_BENCH_SECTIONS_H_
