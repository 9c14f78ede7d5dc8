// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The remote stores against one round trip to their server.

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "ipclock_rows.h"
#include "remote_peers.h"
#include "sections.h"
#include "symfony_peer.h"

namespace ipclock_bench {

void RemoteSections(const Settings& s, const Workspace& ws, Report* report) {
  // A round trip costs tens of microseconds: fewer operations.
  const RunShape shape = Scaled(s.shape, 50);
  if (const char* redis = report->Server("IPCLOCK_TEST_REDIS", "redis")) {
    const char* kPing = "hiredis PING round trip";
    std::string why;
    RedisResetCommandStats(redis, &why);
    Row& ping = report->Add("redis", kPing, RedisPing(shape, redis, &why), kNs, why);
    const double ping_server_us = RedisServerMicrosPerCall(redis, "ping", &why);
    // Each acquire+release is two scripts (EVALSHA), and a script runs
    // longer on the server than a PING: the true floor is the two round
    // trips' transport plus the server's time in the two scripts, as its
    // INFO commandstats reports it for this very run.
    struct Format {
      const char* name;
      double ping_goal;
    };
    for (Format f : {Format{"simple", 2.1}, Format{"symfony", 2.6}}) {
      const std::string dsn = WithOption(redis, absl::StrCat("format=", f.name));
      const std::string figure = absl::StrCat("ipclock acquire+release, format=", f.name);
      why.clear();
      const bool reset = RedisResetCommandStats(redis, &why);
      Row* r = ReusedHandleRow(shape, "redis", dsn, figure, absl::StrCat(ws.tag, ".", f.name),
                               report);
      if (r == nullptr) continue;
      Against(*r, *report, kPing, GoalKind::kRatioAtMost, f.ping_goal);
      const double script_us = reset ? RedisServerMicrosPerCall(redis, "evalsha", &why) : -1;
      const std::string floor_figure =
          absl::StrCat("floor, format=", f.name, ": 2 PING round trips + 2 scripts' server time");
      double floor = -1;
      if (ping.value > 0 && ping_server_us >= 0 && script_us >= 0) {
        floor = 2 * (ping.value - ping_server_us * 1000) + 2 * script_us * 1000;
      }
      Row& fl = report->Add("redis", floor_figure, floor, kNs);
      fl.note = floor < 0 ? why : absl::StrCat("server time per script ", script_us,
                                               " µs, per PING ", ping_server_us, " µs");
      Row copy = *r;
      Row& vs = report->Add("redis", copy.figure, copy.value, kNs);
      Against(vs, *report, floor_figure, GoalKind::kRatioAtMost, 1.15);
    }
    if (absl::StatusOr<std::shared_ptr<ipclock::Store>> store =
            OpenStore(WithOption(redis, "format=symfony"));
        store.ok()) {
      double cycle = FullCycle(shape, *store, ws.tag + ".cycle");
      Row& c = report->Add("redis", "ipclock full cycle, format=symfony", cycle, kNs);
      const SymfonyFigures& php = SymfonyPeerOnce(ws.dir, s.shape);
      auto it = php.ns.find("redis_cycle_ns");
      report->Add("redis", "Symfony RedisStore create+acquire+release",
                  it == php.ns.end() ? -1 : it->second, kNs);
      Against(c, *report, "Symfony RedisStore create+acquire+release",
              GoalKind::kFasterAtLeast, 3.5);
    }
    // Redis tells no one of a lost key: the watch finds it at its next check.
    report->Add("redis", "lost lock (DEL) reported by LockWatch, 1 s interval",
                RedisLossDetection(s.quick ? 3 : 9, WithOption(redis, "secret=none"), &why), kNs,
                why);
  }

  const char* pg = report->Server("IPCLOCK_TEST_POSTGRES", "postgres");
  if (pg == nullptr) return;
  const char* kSelect = "libpq SELECT 1 round trip";
  std::string why;
  report->Add("postgres", kSelect, PostgresSelect1(shape, pg, &why), kNs, why);
  if (Row* r = ReusedHandleRow(shape, "postgres", pg, "ipclock acquire+release",
                               ws.tag + ".pg", report)) {
    Against(*r, *report, kSelect, GoalKind::kRatioAtMost, 2.3);
  }
  // The session's socket closes: the watch hears it at once.
  why.clear();
  report->Add("postgres", "lost lock (pg_terminate_backend) reported by LockWatch",
              PostgresLossDetection(s.quick ? 3 : 9, pg, &why), kNs, why);
}

}  // namespace ipclock_bench
