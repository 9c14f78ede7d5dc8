// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "remote_peers.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/lock.h"
#include "ipclock/lock_factory.h"
#include "ipclock/lock_watch.h"
#include "ipclock/stores/postgres_store.h"
#include "ipclock/store_factory.h"
#include "client_connect.h"
#include "ipclock_config.h"

namespace ipclock_bench {

double RedisPing([[maybe_unused]] const RunShape& shape, [[maybe_unused]] const std::string& dsn,
                 std::string* why) {
#if IPCLOCK_HAVE_REDIS
  return MedianNsPerCall(shape, ConnectRedis(dsn, why), redisFree, [](redisContext* c) {
    auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
    if (reply == nullptr) return false;
    freeReplyObject(reply);
    return true;
  });
#else
  return Unavailable(why, "hiredis not built in");
#endif
}

bool RedisResetCommandStats(const std::string& dsn, std::string* why) {
#if IPCLOCK_HAVE_REDIS
  redisContext* c = ConnectRedis(dsn, why);
  if (c == nullptr) return false;
  auto* reply = static_cast<redisReply*>(redisCommand(c, "CONFIG RESETSTAT"));
  const bool ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
  if (!ok) *why = "CONFIG RESETSTAT was refused";
  if (reply != nullptr) freeReplyObject(reply);
  redisFree(c);
  return ok;
#else
  (void)dsn;
  *why = "hiredis not built in";
  return false;
#endif
}

double RedisServerMicrosPerCall(const std::string& dsn, const std::string& command,
                                std::string* why) {
#if IPCLOCK_HAVE_REDIS
  redisContext* c = ConnectRedis(dsn, why);
  if (c == nullptr) return -1;
  auto* reply = static_cast<redisReply*>(redisCommand(c, "INFO commandstats"));
  double micros = -1;
  if (reply != nullptr && reply->type == REDIS_REPLY_STRING) {
    // Lines "cmdstat_ping:calls=N,usec=N,usec_per_call=F,...".
    const std::string text(reply->str, reply->len);
    const std::string head = absl::StrCat("cmdstat_", command, ":");
    size_t at = text.find(head);
    size_t field = at == std::string::npos ? at : text.find("usec_per_call=", at);
    if (field != std::string::npos) {
      field += sizeof("usec_per_call=") - 1;
      size_t end = text.find_first_of(",\r\n", field);
      if (!absl::SimpleAtod(text.substr(field, end - field), &micros)) micros = -1;
    }
  }
  if (micros < 0) *why = absl::StrCat("INFO commandstats has no ", command);
  if (reply != nullptr) freeReplyObject(reply);
  redisFree(c);
  return micros;
#else
  (void)dsn;
  (void)command;
  *why = "hiredis not built in";
  return -1;
#endif
}

namespace {

// Takes `resource` on `dsn`, watches it, runs `lose` at a random point of
// the interval, and returns the ns until the watch reported the loss.
template <typename Lose>
double DetectionRounds(int rounds, const std::string& dsn, Lose lose, std::string* why) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) {
    *why = std::string(store.status().message());
    return -1;
  }
  std::minstd_rand rng(static_cast<unsigned>(ipclock::Deadline::NowNanos()));
  const ipclock::WatchOptions defaults;
  std::vector<double> ns;
  for (int i = 0; i < rounds; ++i) {
    const std::string resource = "bench-loss-" + std::to_string(i);
    absl::StatusOr<ipclock::Lock> lock =
        ipclock::AcquireLock(*store, resource, absl::Seconds(5));
    if (!lock.ok()) {
      *why = std::string(lock.status().message());
      return -1;
    }
    std::atomic<int64_t> reported{0};
    ipclock::WatchOptions options;
    options.diagnostics = [&](const ipclock::Diagnostic&) {
      reported = ipclock::Deadline::NowNanos();
    };
    ipclock::LockWatch watch;
    absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(*std::move(lock), options);
    if (!watched.ok()) {
      *why = std::string(watched.status().message());
      return -1;
    }
    absl::SleepFor(defaults.check_interval *
                   std::uniform_real_distribution<double>(0, 1)(rng));
    const int64_t lost = ipclock::Deadline::NowNanos();
    if (!lose(resource)) {
      *why = "could not cause the loss";
      return -1;
    }
    const int64_t give_up = lost + 10 * absl::ToInt64Nanoseconds(defaults.check_interval);
    while (reported.load() == 0 && ipclock::Deadline::NowNanos() < give_up) {
      absl::SleepFor(absl::Microseconds(200));
    }
    if (reported.load() == 0) {
      *why = "the loss was not reported";
      return -1;
    }
    ns.push_back(static_cast<double>(reported.load() - lost));
    watched->Release().IgnoreError();  // Aborted: it was lost
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

// DetectionRounds whose `lose(conn, resource)` uses a connection of the
// bench's own, which `close(conn)` ends after the rounds: -1 when `conn` is
// nullptr (its connect failed, saying why).
template <typename Conn, typename Close, typename Lose>
double DetectionRoundsOn(int rounds, const std::string& dsn, Conn* conn, Close close, Lose lose,
                         std::string* why) {
  if (conn == nullptr) return -1;
  const double ns = DetectionRounds(
      rounds, dsn, [&](const std::string& resource) { return lose(conn, resource); }, why);
  close(conn);
  return ns;
}

}  // namespace

double RedisLossDetection([[maybe_unused]] int rounds, [[maybe_unused]] const std::string& dsn,
                          std::string* why) {
#if IPCLOCK_HAVE_REDIS
  return DetectionRoundsOn(
      rounds, dsn, ConnectRedis(dsn, why), redisFree,
      [](redisContext* c, const std::string& key) {
        auto* r = static_cast<redisReply*>(redisCommand(c, "DEL %b", key.data(), key.size()));
        if (r == nullptr) return false;
        freeReplyObject(r);
        return true;
      },
      why);
#else
  return Unavailable(why, "hiredis not built in");
#endif
}

double PostgresLossDetection([[maybe_unused]] int rounds, [[maybe_unused]] const std::string& dsn,
                             std::string* why) {
#if IPCLOCK_HAVE_POSTGRES
  return DetectionRoundsOn(
      rounds, dsn, ConnectPostgres(dsn, why), PQfinish,
      [](PGconn* admin, const std::string& resource) {
        const uint64_t id = static_cast<uint64_t>(
            ipclock::PostgresLockId(resource, ipclock::PostgresLockIdScheme::kNative));
        const std::string sql = absl::StrCat(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
            "AND granted AND classid = ", id >> 32, " AND objid = ", id & 0xffffffffu,
            " AND objsubid = 1");
        PGresult* r = PQexec(admin, sql.c_str());
        const bool ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
        PQclear(r);
        return ok;
      },
      why);
#else
  return Unavailable(why, "libpq not built in");
#endif
}

double PostgresSelect1([[maybe_unused]] const RunShape& shape,
                       [[maybe_unused]] const std::string& dsn, std::string* why) {
#if IPCLOCK_HAVE_POSTGRES
  return MedianNsPerCall(shape, ConnectPostgres(dsn, why), PQfinish, [](PGconn* conn) {
    PGresult* r = PQexec(conn, "SELECT 1");
    const bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
    return ok;
  });
#else
  return Unavailable(why, "libpq not built in");
#endif
}

}  // namespace ipclock_bench
