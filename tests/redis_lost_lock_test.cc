// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A held Redis lock lost on the server, as it happens in production: the
// key deleted (DEL), the database flushed (FLUSHALL), the key evicted under
// maxmemory (a volatile and an allkeys policy), the server restarted
// without persistence, the lease run out, the key taken over or
// overwritten. Each loss is seen the three ways a holder can see it, in
// both formats: Lock::CheckAcquired(), Release(), and a LockWatch that must
// report it within its check interval (the lease is a minute long, so only
// the check can have found it). Detection latencies are printed.
//
// And the opposite: a watched lock whose server stops is not reported lost
// while its lease lasts (renewals fail, checks cannot ask), and is reported
// once the lease has run out, never before.
//
// Everything runs on the suite's own server (tests/redis_fixture.h).

#include <signal.h>
#include <stdlib.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store.h"
#include "ipclock/spi/store_interface.h"
#include "redis_fixture.h"
#include "loss_log.h"  // last: they pull in cmocka.h

namespace ipclock_test {
namespace {

using ipclock::Lock;
using ipclock::Diagnostic;
using ipclock::LockMode;
using ipclock::LockWatch;
using ipclock::WatchedLock;
using ipclock::WatchOptions;

constexpr absl::Duration kLongLease = absl::Seconds(60);
constexpr absl::Duration kInterval = absl::Milliseconds(250);

// Detection latencies, printed together at the end of each test.
struct Latencies {
  std::vector<std::string> lines;
  void Add(absl::string_view what, double seconds) {
    lines.push_back(absl::StrFormat("%s: reported %.1f ms after the loss", what, seconds * 1e3));
  }
  ~Latencies() {
    for (const std::string& l : lines) print_message("latency: %s\n", l.c_str());
  }
};

// --- Ways to lose the lock ------------------------------------------------------------

struct Loss {
  const char* name;
  void (*cause)(RedisServer& own, const std::string& key);
  // What every report of this loss must say.
  const char* says;
};

void Delete(RedisServer& own, const std::string& key) {
  RedisClient(own.dsn()).Ok({"DEL", key});
}

void FlushAll(RedisServer& own, const std::string&) {
  RedisClient(own.dsn()).Ok({"FLUSHALL"});
}

// Fills the server past a small maxmemory with keys of a TTL until the lock
// key is evicted, then lifts the limit (the policy stays, as on a server
// configured so).
void EvictUnder(const char* policy, RedisServer& own, const std::string& key) {
  RedisClient raw(own.dsn());
  const long long used = raw.Info("memory", "used_memory");
  raw.Ok({"CONFIG", "SET", "maxmemory-policy", policy});
  raw.Ok({"CONFIG", "SET", "maxmemory", absl::StrCat(used + 2 * 1024 * 1024)});
  const std::string blob(16 * 1024, 'x');
  int rounds = 0;
  for (; rounds < 5000 && raw.Int({"EXISTS", key}) == 1; ++rounds) {
    for (int j = 0; j < 16; ++j) {
      raw.Ok({"SET", absl::StrCat("fill:", key, ":", rounds, ":", j), blob, "PX", "600000"});
    }
  }
  if (raw.Int({"EXISTS", key}) == 1) fail_msg("the lock key was not evicted");
  raw.Ok({"CONFIG", "SET", "maxmemory", "0"});
}
void EvictVolatileLru(RedisServer& own, const std::string& key) {
  EvictUnder("volatile-lru", own, key);
}
void EvictAllkeysLru(RedisServer& own, const std::string& key) {
  EvictUnder("allkeys-lru", own, key);
}

// SIGKILL and a fresh start: the server comes back empty (no persistence).
void RestartWithoutPersistence(RedisServer& own, const std::string&) { own.Restart(); }

const Loss kDel = {"DEL", &Delete, "it was deleted (DEL or UNLINK) or evicted"};
const Loss kFlushAll = {"FLUSHALL", &FlushAll, "the database was flushed (FLUSHALL or FLUSHDB)"};
const Loss kEvictVolatile = {"eviction under volatile-lru", &EvictVolatileLru,
                             "evicts keys when it reaches maxmemory (maxmemory-policy volatile-lru"};
const Loss kEvictAllkeys = {"eviction under allkeys-lru", &EvictAllkeysLru,
                            "evicts keys when it reaches maxmemory (maxmemory-policy allkeys-lru"};
const Loss kRestart = {"a restart without persistence", &RestartWithoutPersistence,
                       "the server was restarted or replaced (its run_id changed)"};

std::string DsnFor(RedisServer& own, const char* format) {
  return FormatDsn(own.dsn(), format, "&connect_timeout=1&command_timeout=2");
}

void ExpectReport(const absl::Status& s, const Loss& loss, absl::string_view also) {
  print_message("%s: %s\n", loss.name, s.ToString().c_str());
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  if (!Contains(s, loss.says)) fail_msg("the report does not say \"%s\"", loss.says);
  if (!Contains(s, also)) fail_msg("the report does not say \"%s\"", also.data());
}

// The holder asks: Aborted, saying what happened; and the lock really is
// free for the next holder.
void SeenByCheckAcquired(const Loss& loss, RedisServer& own, const char* format) {
  auto store = OpenStoreOrFail(DsnFor(own, format));
  const std::string r = UniqueResource("lost-check");
  Lock lock = MakeHeldLock(store, r, kLongLease);
  assert_true(Held(lock));
  loss.cause(own, r);
  ExpectReport(lock.CheckAcquired(), loss, "the lock is no longer held");
  assert_false(lock.is_acquired());
  Lock rival = MakeHeldLock(store, r, kLongLease);
}

// The holder releases without asking first: never OK.
void SeenByRelease(const Loss& loss, RedisServer& own, const char* format) {
  auto store = OpenStoreOrFail(DsnFor(own, format));
  const std::string r = UniqueResource("lost-release");
  Lock lock = MakeHeldLock(store, r, kLongLease);
  loss.cause(own, r);
  ExpectReport(lock.Release(), loss, "the lock was no longer held at release");
}

// A watch reports it within its interval: the lease cannot explain it.
void SeenByWatch(const Loss& loss, RedisServer& own, const char* format, Latencies* latencies) {
  auto store = OpenStoreOrFail(DsnFor(own, format));
  const std::string r = UniqueResource("lost-watch");
  Lock lock = MakeHeldLock(store, r, kLongLease);
  LossLog log;
  LockWatch watch;
  WatchedLock watched = log.Watch(watch, std::move(lock), kInterval);
  absl::SleepFor(kInterval * 2);
  assert_int_equal(log.size(), 0);  // nothing lost yet, nothing reported
  loss.cause(own, r);
  const double lost_at = NowSeconds();
  if (!log.WaitUntil(lost_at + 30)) fail_msg("%s: not reported within 30 s", loss.name);
  latencies->Add(absl::StrCat(loss.name, ", format=", format, ", interval ",
                              absl::FormatDuration(kInterval)),
                 log.first_at() - lost_at);
  ExpectReport(log.first().status, loss, "the lock is no longer held");
  assert_true(watched.lost());
  assert_int_equal(log.size(), 1);  // once
  ASSERT_CODE(watched.Release(), absl::StatusCode::kAborted);
}

void LoseThreeWays(const Loss& loss) {
  RedisServer& own = OwnRedis();
  Latencies latencies;
  for (const char* format : kRedisFormats) {
    SeenByCheckAcquired(loss, own, format);
    SeenByRelease(loss, own, format);
    SeenByWatch(loss, own, format, &latencies);
  }
}

void KeyDeleted(void**) { LoseThreeWays(kDel); }
void DatabaseFlushed(void**) { LoseThreeWays(kFlushAll); }
void EvictedUnderVolatileLru(void**) { LoseThreeWays(kEvictVolatile); }
void EvictedUnderAllkeysLru(void**) { LoseThreeWays(kEvictAllkeys); }
void ServerRestartedWithoutPersistence(void**) { LoseThreeWays(kRestart); }

// --- What else a report can say ----------------------------------------------------------

void LeaseRanOut(void**) {
  RedisServer& own = OwnRedis();
  for (const char* format : kRedisFormats) {
    auto store = OpenStoreOrFail(DsnFor(own, format));
    Lock lock = MakeHeldLock(store, UniqueResource("lease"), absl::Milliseconds(200));
    absl::SleepFor(absl::Milliseconds(500));
    absl::Status s = lock.CheckAcquired();
    print_message("%s\n", s.ToString().c_str());
    ASSERT_CODE(s, absl::StatusCode::kAborted);
    assert_true(Contains(s, "its lease ran out and the server expired it"));
  }
  // A reader whose lease ran out while another's lasts: its entry is still
  // in the sorted set, past its time.
  auto store = OpenStoreOrFail(DsnFor(own, "symfony"));
  const std::string r = UniqueResource("reader-lease");
  Lock brief = MakeLock(store, r, absl::Milliseconds(200));
  Lock lasting = MakeLock(store, r, kLongLease);
  assert_true(TryOrFail(brief, LockMode::kShared));
  assert_true(TryOrFail(lasting, LockMode::kShared));
  absl::SleepFor(absl::Milliseconds(500));
  absl::Status s = brief.CheckAcquired();
  print_message("%s\n", s.ToString().c_str());
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  assert_true(Contains(s, "its lease ran out on the server's clock"));
  assert_true(Held(lasting));
}

void TakenOverOrOverwritten(void**) {
  RedisServer& own = OwnRedis();
  RedisClient raw(own.dsn());
  for (const char* format : kRedisFormats) {
    auto store = OpenStoreOrFail(DsnFor(own, format));
    const std::string r = UniqueResource("taken");
    Lock lock = MakeHeldLock(store, r, kLongLease);
    raw.Ok({"DEL", r});
    Lock rival = MakeHeldLock(store, r, kLongLease);
    absl::Status s = lock.CheckAcquired();
    print_message("%s\n", s.ToString().c_str());
    ASSERT_CODE(s, absl::StatusCode::kAborted);
    assert_true(Contains(s, absl::StrCat("another owner holds it now (a writer with fencing token ",
                                         *rival.fence(), ")")));
    // The rival's lock is untouched by the loser's release.
    ASSERT_OK(lock.Release());  // CheckAcquired let go already
    assert_true(Held(rival));

    Lock other = MakeHeldLock(store, UniqueResource("overwritten"), kLongLease);
    raw.Ok({"DEL", other.resource()});
    raw.Ok({"HSET", other.resource(), "field", "value"});
    s = other.Release();
    print_message("%s\n", s.ToString().c_str());
    ASSERT_CODE(s, absl::StatusCode::kAborted);
    assert_true(Contains(s, "overwritten with a value of type hash"));
  }
  // Symfony format seeing a simple-format holder.
  auto symfony = OpenStoreOrFail(DsnFor(own, "symfony"));
  auto simple = OpenStoreOrFail(DsnFor(own, "simple"));
  const std::string r = UniqueResource("cross");
  Lock lock = MakeHeldLock(symfony, r, kLongLease);
  raw.Ok({"DEL", r});
  Lock rival = MakeHeldLock(simple, r, kLongLease);
  absl::Status s = lock.CheckAcquired();
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  assert_true(Contains(s, "in the string format"));
}

// --- The server stops under a watched lock ---------------------------------------------

void StoppedServerLosesTheLockWhenTheLeaseRunsOut(void**) {
  RedisServer& own = OwnRedis();
  auto store = OpenStoreOrFail(
      WithOptions(own.dsn(), "secret=none&connect_timeout=0.5&command_timeout=0.5"));
  const absl::Duration ttl = absl::Seconds(3);
  Lock lock = MakeHeldLock(store, UniqueResource("stopped"), ttl);
  LossLog log;
  LockWatch watch;
  WatchedLock watched = log.Watch(watch, std::move(lock), absl::Milliseconds(100));
  // A few renewals and checks while the server is up: nothing to report,
  // and the lease keeps being pushed out.
  absl::SleepFor(ttl + absl::Seconds(1));
  assert_int_equal(log.size(), 0);
  assert_true(watched.RemainingLifetime() > ttl / 3);

  // Measured before the lease is read: the lease cannot end before
  // stopped_at + left.
  const double stopped_at = NowSeconds();
  const absl::Duration left = watched.RemainingLifetime();
  own.Kill();
  const double lease_end = stopped_at + absl::ToDoubleSeconds(left);
  // Checks now fail (Unavailable) and renewals fail: neither is a loss.
  while (NowSeconds() < lease_end - 0.2) {
    if (log.size() != 0) {
      fail_msg("reported lost %.3f s before the lease ran out: %s", lease_end - NowSeconds(),
               log.first().status.ToString().c_str());
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (!log.WaitUntil(lease_end + 20)) fail_msg("not reported lost after the lease ran out");
  const double reported = log.first_at();
  print_message("latency: server stopped with %.3f s of lease left; reported lost %.3f s "
                "after it stopped, %.1f ms after the lease ran out\n",
                absl::ToDoubleSeconds(left), reported - stopped_at,
                (reported - lease_end) * 1e3);
  if (reported < lease_end) {
    fail_msg("reported %.3f s before the lease ran out", lease_end - reported);
  }
  const absl::Status status = log.first().status;
  print_message("%s\n", status.ToString().c_str());
  ASSERT_CODE(status, absl::StatusCode::kAborted);
  assert_true(Contains(status, "lease ran out"));
  // The server is still down: the release cannot be confirmed, and says so.
  assert_false(watched.Release().ok());
}

// --- Client tracking: losses told at once ----------------------------------------------

// A watch whose interval check is an hour away still reports a DEL, a
// FLUSHALL and an overwrite of its key within a round trip or two: the
// server pushes the change (client tracking). Bound asserted: 1 s.
void TrackingReportsAtOnce(void**) {
  RedisServer& own = OwnRedis();
  Latencies latencies;
  struct Change {
    const char* name;
    void (*cause)(RedisServer& own, const std::string& key);
  };
  const Change changes[] = {
      {"DEL", &Delete},
      {"FLUSHALL", &FlushAll},
      {"SET over the key",
       [](RedisServer& own, const std::string& key) {
         RedisClient(own.dsn()).Ok({"SET", key, "someone-else"});
       }},
  };
  for (const char* format : kRedisFormats) {
    for (const Change& change : changes) {
      auto store = OpenStoreOrFail(DsnFor(own, format));
      const std::string r = UniqueResource("tracked");
      Lock lock = MakeHeldLock(store, r, kLongLease);
      LossLog log;
      LockWatch watch;
      WatchedLock watched = log.Watch(watch, std::move(lock), absl::Hours(1));
      absl::SleepFor(absl::Milliseconds(300));  // the key is followed by now
      assert_int_equal(log.size(), 0);
      assert_int_equal(RedisClient(own.dsn()).Info("clients", "tracking_clients"), 1);
      change.cause(own, r);
      const double changed_at = NowSeconds();
      if (!log.WaitUntil(changed_at + 10)) {
        fail_msg("%s (format=%s): not reported within 10 s with the interval an hour away",
                 change.name, format);
      }
      const double took = log.first_at() - changed_at;
      latencies.Add(absl::StrCat(change.name, ", format=", format, ", tracking, interval 1h"),
                    took);
      ASSERT_CODE(log.first().status, absl::StatusCode::kAborted);
      if (took > 1.0) fail_msg("%s: reported after %.3f s", change.name, took);
      (void)watched.Release();
    }
  }
}

// A server that refuses client tracking (here an ACL user without CLIENT)
// is polled at the watch's interval instead: the DEL is found all the same.
void RefusedTrackingFallsBackToPolling(void**) {
  RedisServer& own = OwnRedis();
  RedisClient admin(own.dsn());
  admin.Ok({"ACL", "SETUSER", "notracking", "on", ">notracking-pw", "~*", "&*", "+@all",
            "-client"});
  auto store = OpenStoreOrFail(WithOptions(
      absl::StrCat("redis://notracking:notracking-pw@127.0.0.1:", own.port()),
      "secret=none&connect_timeout=1&command_timeout=2"));
  const std::string r = UniqueResource("untracked");
  Lock lock = MakeHeldLock(store, r, kLongLease);
  LossLog log;
  LockWatch watch;
  WatchedLock watched = log.Watch(watch, std::move(lock), kInterval);
  // Half-way between two checks: the DEL is found by the next one.
  absl::SleepFor(kInterval * 2 + kInterval / 2);
  assert_int_equal(log.size(), 0);
  // Nobody tracks: the refusal was heard.
  assert_int_equal(admin.Info("clients", "tracking_clients"), 0);
  Delete(own, r);
  const double lost_at = NowSeconds();
  if (!log.WaitUntil(lost_at + 10)) fail_msg("not reported within 10 s");
  const double took = log.first_at() - lost_at;
  print_message("latency: DEL, tracking refused, interval %s: reported %.1f ms after the loss\n",
                absl::FormatDuration(kInterval).c_str(), took * 1e3);
  assert_true(Contains(log.first().status, "the lock is no longer held"));
  (void)watched.Release();
  admin.Ok({"ACL", "DELUSER", "notracking"});
}

// One process holds a flock lock and a Redis lock under one watch, and the
// Redis server stops (SIGSTOP: connected, silent, so that every check of
// the Redis lock waits for its command timeout). The flock lock's loss is
// still reported within the local bound: its checks never wait behind the
// Redis lock's. Bound asserted: 1 s, for a loaded machine (the promise is
// 100 ms; the Redis check waits 5 s).
void StoppedServerDelaysNoOtherLock(void**) {
  RedisServer& own = OwnRedis();
  auto redis = OpenStoreOrFail(WithOptions(own.dsn(), "secret=none&command_timeout=5"));
  const std::string dir = MakeTempDir();
  auto flock = OpenStoreOrFail(absl::StrCat("flock://", dir, "?removeipc=ignore"));
  Lock remote = MakeLock(redis, UniqueResource("stopped-remote"), kLongLease);
  Lock local = MakeLock(flock, UniqueResource("stopped-local"), kLongLease);
  assert_true(TryOrFail(remote));
  assert_true(TryOrFail(local));
  LossLog log;
  LockWatch watch;
  // Checked every 50 ms: a Redis check is under way, waiting, when the
  // flock file goes.
  const WatchOptions options = log.Options(absl::Milliseconds(50));
  absl::StatusOr<WatchedLock> watched_remote = watch.Watch(std::move(remote), options);
  absl::StatusOr<WatchedLock> watched_local = watch.Watch(std::move(local), options);
  ASSERT_OK(watched_remote);
  ASSERT_OK(watched_local);
  absl::SleepFor(absl::Milliseconds(200));
  kill(own.pid(), SIGSTOP);
  absl::SleepFor(absl::Milliseconds(300));
  const double deleted_at = NowSeconds();
  if (system(absl::StrCat("rm -f ", dir, "/*.lock").c_str()) != 0) fail_msg("rm failed");
  const bool reported = log.WaitUntil(deleted_at + 10);
  const double took = reported ? log.first_at() - deleted_at : 10;
  kill(own.pid(), SIGCONT);
  if (!reported) fail_msg("the flock loss was not reported within 10 s");
  print_message("latency: flock file deleted while the Redis server is stopped: reported "
                "after %.2f ms\n", took * 1e3);
  assert_true(Contains(log.first().status, "was deleted"));
  if (took > 1.0) fail_msg("reported after %.3f s, beyond the local bound", took);
  assert_true(watched_local->lost());
  assert_false(watched_remote->lost());
  (void)watched_local->Release();
  ASSERT_OK(watched_remote->Release());
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(KeyDeleted),
      cmocka_unit_test(DatabaseFlushed),
      cmocka_unit_test(EvictedUnderVolatileLru),
      cmocka_unit_test(EvictedUnderAllkeysLru),
      cmocka_unit_test(ServerRestartedWithoutPersistence),
      cmocka_unit_test(LeaseRanOut),
      cmocka_unit_test(TakenOverOrOverwritten),
      cmocka_unit_test(StoppedServerLosesTheLockWhenTheLeaseRunsOut),
      cmocka_unit_test(StoppedServerDelaysNoOtherLock),
      cmocka_unit_test(TrackingReportsAtOnce),
      cmocka_unit_test(RefusedTrackingFallsBackToPolling),
  };
  return cmocka_run_group_tests_name("redis_lost_lock", tests, nullptr, KillOwnRedis);
}
