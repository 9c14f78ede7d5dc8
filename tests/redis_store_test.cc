// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Redis store against real servers (tests/redis_fixture.h): what the
// conformance suite cannot see from outside, and only that.
//
//   * on $IPCLOCK_TEST_REDIS (and _AUTH, with requirepass): both formats'
//     layouts on the server, expiry on the server's clock, refresh, a
//     serialized key released from another process, the fence on the
//     server, owner death as readers and late releasers see it, the
//     "string type = conflict" rule, AUTH and SELECT, and PHP's Symfony
//     RedisStore as a peer (tests/php/redis_peer.php);
//   * on the suite's own server: counting round trips, SCRIPT FLUSH, ACL
//     users, a Unix socket, fixed key names, and killing the server while a
//     lock is held and while a waiter waits.
//
// The tests of the server side (SELECT onwards) are in
// redis_store_test_server.cc, for length; this file's table runs them.
//
// Losing a held lock (DEL, FLUSHALL, eviction, restarts) is
// redis_lost_lock_test.cc.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"  // hiredis's sds.h (C flexible arrays)
#include <hiredis.h>
#pragma GCC diagnostic pop

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/dsn.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/stores/redis_store.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "ipclock/spi/store_interface.h"
#include "spawn_util.h"
#include "redis_store_test.h"
#include "redis_fixture.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

using ipclock::Lock;
using ipclock::LockMode;
using ipclock::LockOptions;
using ipclock::Store;


// --- DSNs and creation ------------------------------------------------------------------

void DsnErrors(void**) {
  const std::string secret_dir = MakeTempDir();
  for (const char* dsn : {"redis://127.0.0.1:1?format=json", "redis://127.0.0.1:1?fencing=maybe",
                          "redis://127.0.0.1:1?connect_timeout=-1",
                          "redis://127.0.0.1:1?command_timeout=soon", "redis://127.0.0.1:1/2?db=3",
                          "redis://127.0.0.1:1/two", "redis://127.0.0.1:1?colour=blue",
                          "redis://127.0.0.1:1?naming=parse-lock&format=symfony",
                          "redis://127.0.0.1:1?naming=parse-lock&prefix=x",
                          "redis://127.0.0.1:1?secret=short", "redis:", "redis://"}) {
    const absl::Status s = ipclock::StoreFromDsn(dsn).status();
    if (!absl::IsInvalidArgument(s)) fail_msg("%s: %s", dsn, s.ToString().c_str());
  }
  ASSERT_CODE(ipclock::StoreFromDsn("rediss://127.0.0.1:1"), absl::StatusCode::kUnimplemented);
  // A missing secret file is named (a configuration fault, found before the
  // server is tried); a secret never is.
  absl::StatusOr<std::shared_ptr<Store>> s =
      ipclock::StoreFromDsn(absl::StrCat("redis://127.0.0.1:1?secret_file=", secret_dir, "/nope"));
  ASSERT_CODE(s, absl::StatusCode::kInvalidArgument);
  assert_true(Contains(s.status(), absl::StrCat(secret_dir, "/nope")));
  // A FIFO (or any other non-regular file) is refused without blocking on
  // it: no writer will ever come. A child does it, so that a hang fails the
  // test instead of stopping the suite.
  const std::string fifo = absl::StrCat(secret_dir, "/fifo");
  assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
  pid_t child = ForkChild([&] {
    absl::Status st =
        ipclock::StoreFromDsn(absl::StrCat("redis://127.0.0.1:1?secret_file=", fifo)).status();
    return st.code() == absl::StatusCode::kInvalidArgument &&
                   absl::StrContains(st.message(), "expected a regular file")
               ? 0
               : 2;
  });
  assert_int_equal(WaitChild(child, 10), 0);
  s = ipclock::StoreFromDsn(absl::StrCat("redis://127.0.0.1:1?secret_file=", secret_dir));
  ASSERT_CODE(s, absl::StatusCode::kInvalidArgument);
  s = ipclock::StoreFromDsn("redis://127.0.0.1:1?secret=fifteen-bytes!!");
  assert_false(Contains(s.status(), "fifteen-bytes"));
  // NewRedisStore checks its options too.
  ipclock::RedisStoreOptions o;
  o.port = 0;
  ASSERT_CODE(ipclock::NewRedisStore(o), absl::StatusCode::kInvalidArgument);
  o = ipclock::RedisStoreOptions();
  o.user = "alice";
  ASSERT_CODE(ipclock::NewRedisStore(o), absl::StatusCode::kInvalidArgument);
}

int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<struct sockaddr*>(&a), &len) != 0) {
    fail_msg("bind: %s", strerror(errno));
  }
  close(fd);  // bound, never listened, now closed: connections are refused
  return ntohs(a.sin_port);
}

void ServerDownAtCreation(void**) {
  const int port = ClosedPort();
  const std::string server = absl::StrCat("127.0.0.1:", port);
  absl::StatusOr<std::shared_ptr<Store>> s =
      ipclock::StoreFromDsn(absl::StrCat("redis://", server, "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kUnavailable);
  assert_true(Contains(s.status(), server));
  print_message("%s\n", s.status().ToString().c_str());
  // With a password in the DSN: never in the message.
  for (const char* form : {"redis://:hunter2hunter2@", "redis://hunter2hunter2@",
                           "redis://alice:hunter2hunter2@"}) {
    s = ipclock::StoreFromDsn(absl::StrCat(form, server));
    ASSERT_CODE(s, absl::StatusCode::kUnavailable);
    assert_true(Contains(s.status(), server));
    assert_false(Contains(s.status(), "hunter2"));
  }
  s = ipclock::StoreFromDsn("redis:///nonexistent/ipclock/redis.sock?secret=none");
  ASSERT_CODE(s, absl::StatusCode::kUnavailable);
  assert_true(Contains(s.status(), "/nonexistent/ipclock/redis.sock"));
}

// --- Formats on the server -----------------------------------------------------------

void SymfonyLayout(void**) {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  auto store = OpenStoreOrFail(FormatDsn(base, "symfony"));
  assert_true(store->capabilities().shared);
  assert_true(store->capabilities().serializable);
  assert_true(store->capabilities().scope == ipclock::Scope::kRemote);
  assert_false(store->capabilities().blocking);
  RedisClient raw(base);
  const std::string r = UniqueResource("sf-layout");
  Lock lock = MakeLock(store, r, absl::Seconds(10));
  const long long before = raw.ServerMillis();
  assert_true(TryOrFail(lock));
  const long long after = raw.ServerMillis();
  const std::string token = TokenOf(lock);
  assert_int_equal(token.size(), 44);
  assert_string_equal(raw.Str({"TYPE", r})->c_str(), "zset");
  assert_int_equal(raw.Int({"ZCARD", r}), 2);
  // Scores are expiries in ms on the server's clock: TIME + ttl.
  const long long score = AsNumber(raw.Str({"ZSCORE", r, token}));
  assert_int_equal(AsNumber(raw.Str({"ZSCORE", r, "__write__"})), score);
  if (score < before + 10000 || score > after + 10000) {
    fail_msg("score %lld not in server time + ttl [%lld, %lld]", score, before + 10000, after + 10000);
  }
  assert_int_equal(raw.Int({"PEXPIRETIME", r}), score);
  // The companion hash: fence and holder marker.
  const std::string meta = r + ":ipclock";
  assert_string_equal(raw.Str({"HGET", meta, "holder"})->c_str(), token.c_str());
  assert_true(lock.fence().has_value());
  assert_int_equal(AsNumber(raw.Str({"HGET", meta, "fence"})), *lock.fence());
  ASSERT_OK(lock.Release());
  assert_int_equal(raw.Int({"EXISTS", r}), 0);
  assert_int_equal(raw.Int({"HEXISTS", meta, "holder"}), 0);
  assert_int_equal(AsNumber(raw.Str({"HGET", meta, "fence"})), *lock.fence());

  // Readers: one member each, no __write__, the key lives as long as the
  // longest lease.
  Lock a = MakeLock(store, r, absl::Seconds(5)), b = MakeLock(store, r, absl::Seconds(20));
  assert_true(TryOrFail(a, LockMode::kShared));
  assert_true(TryOrFail(b, LockMode::kShared));
  assert_false(a.fence().has_value());
  assert_int_equal(raw.Int({"ZCARD", r}), 2);
  assert_false(raw.Str({"ZSCORE", r, "__write__"}).has_value());
  assert_int_equal(raw.Int({"PEXPIRETIME", r}), AsNumber(raw.Str({"ZSCORE", r, TokenOf(b)})));
  ASSERT_OK(b.Release());
  assert_int_equal(raw.Int({"PEXPIRETIME", r}), AsNumber(raw.Str({"ZSCORE", r, TokenOf(a)})));
}

void SimpleLayout(void**) {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  auto store = OpenStoreOrFail(FormatDsn(base, "simple"));
  assert_false(store->capabilities().shared);
  assert_true(store->capabilities().fencing);
  RedisClient raw(base);
  const std::string r = UniqueResource("simple-layout");
  Lock lock = MakeHeldLock(store, r, absl::Seconds(10));
  assert_string_equal(raw.Str({"TYPE", r})->c_str(), "string");
  assert_string_equal(raw.Str({"GET", r})->c_str(), TokenOf(lock).c_str());
  const long long pttl = raw.Int({"PTTL", r});
  assert_true(pttl > 9000 && pttl <= 10000);
  assert_string_equal(raw.Str({"HGET", r + ":ipclock", "holder"})->c_str(), TokenOf(lock).c_str());
  // Saving again is idempotent: same token, same fence.
  const uint64_t fence = *lock.fence();
  assert_true(TryOrFail(lock));
  assert_int_equal(*lock.fence(), fence);
  ASSERT_OK(lock.Release());
  assert_int_equal(raw.Int({"EXISTS", r}), 0);
}

// Runs `body` once per layout (kRedisFormats) on the test server, with a
// lock on a fresh resource named after `tag` held with a lease of `ttl`
// through a store of that layout, and a client of the server.
void ForEachLayoutHeld(
    const char* tag, absl::Duration ttl,
    const std::function<void(Lock& lock, RedisClient& raw, const char* format)>& body) {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  RedisClient raw(base);
  for (const char* format : kRedisFormats) {
    Lock lock = MakeHeldLock(OpenStoreOrFail(FormatDsn(base, format)),
                             UniqueResource(absl::StrCat(tag, "-", format)), ttl);
    body(lock, raw, format);
  }
}

void ExpiryOnServerClock(void**) {
  ForEachLayoutHeld("expiry", absl::Milliseconds(300),
                    [](Lock& lock, RedisClient& raw, const char*) {
    const std::string& r = lock.resource();
    assert_int_equal(raw.Int({"EXISTS", r}), 1);
    const long long pttl = raw.Int({"PTTL", r});
    assert_true(pttl > 0 && pttl <= 300);
    absl::SleepFor(absl::Milliseconds(600));
    // Gone on the server by itself: no client touched it.
    assert_int_equal(raw.Int({"EXISTS", r}), 0);
    assert_true(lock.IsExpired());
    assert_false(Held(lock));
    ASSERT_OK(lock.Release());
  });
}

// A lease the store cannot keep is refused when the lock is made, and when
// the store is built for it (StoreOptions::lease), before any server.
void InfiniteTtlRefused(void**) {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  auto store = OpenStoreOrFail(WithOptions(base, "secret=none"));
  ipclock::LockOptions options;
  options.ttl = absl::InfiniteDuration();
  ASSERT_CODE(Lock::Create(store, UniqueResource("forever"), options),
              absl::StatusCode::kInvalidArgument);
  ipclock::StoreOptions store_options;
  store_options.lease = absl::InfiniteDuration();
  ASSERT_CODE(ipclock::StoreFromDsn("redis://127.0.0.1:1?secret=none", store_options),
              absl::StatusCode::kInvalidArgument);
}

void Refresh(void**) {
  ForEachLayoutHeld("refresh", absl::Seconds(1),
                    [](Lock& lock, RedisClient& raw, const char* format) {
    const std::string& r = lock.resource();
    ASSERT_OK(lock.Refresh(absl::Seconds(20)));
    assert_true(raw.Int({"PTTL", r}) > 15000);
    assert_true(lock.RemainingLifetime() > absl::Seconds(15));
    if (std::string(format) == "symfony") {
      assert_true(AsNumber(raw.Str({"ZSCORE", r, "__write__"})) > raw.ServerMillis() + 15000);
    }
    absl::SleepFor(absl::Milliseconds(1200));  // past the first TTL
    assert_true(Held(lock));
    // Someone removed it: refreshing says the lock is gone.
    raw.Ok({"DEL", r});
    ASSERT_CODE(lock.Refresh(absl::Seconds(20)), absl::StatusCode::kAborted);
    assert_false(Held(lock));
  });
}

void LeaseCountsFromAcquisition(void**) {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  for (const char* format : kRedisFormats) {
    auto store = OpenStoreOrFail(FormatDsn(base, format));
    const std::string r = UniqueResource("lease");
    Lock holder = MakeHeldLock(store, r, absl::Seconds(10));
    std::thread releaser([&] {
      absl::SleepFor(absl::Milliseconds(800));
      holder.Release().IgnoreError();
    });
    // Waits longer than its own TTL and still gets a full lease.
    Lock waiter = MakeLock(store, r, absl::Milliseconds(500));
    absl::Status s = waiter.Acquire(absl::Seconds(5));
    releaser.join();
    ASSERT_OK(s);
    assert_true(waiter.RemainingLifetime() > absl::Milliseconds(300));
    assert_true(Held(waiter));
  }
}

void SerializedKeyReleasedByAnotherProcess(void**) {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  RedisClient raw(base);
  for (const char* format : kRedisFormats) {
    const std::string dsn = FormatDsn(base, format);
    auto store = OpenStoreOrFail(dsn);
    const std::string r = UniqueResource(absl::StrCat("serial-", format));
    Lock lock = MakeHeldLock(store, r, absl::Seconds(5));
    absl::StatusOr<std::string> text = lock.Serialize();
    ASSERT_OK(text);
    const std::string serialized = *text;
    pid_t child = ForkChild([&] {
      // Another process with its own connection and nothing but the text.
      absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(dsn);
      if (!s.ok()) return 2;
      absl::StatusOr<Lock> adopted = Lock::FromSerialized(*s, serialized);
      if (!adopted.ok()) return 3;
      if (!adopted->CheckAcquired().ok()) return 4;
      if (!adopted->Refresh(absl::Seconds(30)).ok()) return 5;
      if (!adopted->Release().ok()) return 6;
      return 0;
    });
    assert_int_equal(WaitChild(child), 0);
    assert_int_equal(raw.Int({"EXISTS", r}), 0);
    assert_false(Held(lock));
    Lock next = MakeHeldLock(store, r);
  }
}

// The conformance suite sees fences grow; here, that they are the server's
// counter, and that fencing=false writes no companion key.
void FenceOnTheServer(void**) {
  const char* base = RequireRedis();
  RedisClient raw(base);
  for (const char* format : kRedisFormats) {
    auto store = OpenStoreOrFail(FormatDsn(base, format));
    assert_true(store->capabilities().fencing);
    assert_true(store->capabilities().owner_death);
    const std::string r = UniqueResource(absl::StrCat("fence-", format));
    for (int i = 0; i < 2; ++i) {
      Lock lock = MakeHeldLock(store, r);
      assert_int_equal(AsNumber(raw.Str({"HGET", r + ":ipclock", "fence"})), *lock.fence());
    }
    auto plain = OpenStoreOrFail(FormatDsn(base, format, "&fencing=false"));
    assert_false(plain->capabilities().fencing);
    assert_false(plain->capabilities().owner_death);
    const std::string r2 = UniqueResource("nofence");
    Lock lock = MakeHeldLock(plain, r2);
    assert_false(lock.fence().has_value());
    assert_int_equal(raw.Int({"EXISTS", r2 + ":ipclock"}), 0);
  }
}

// A child takes `r` with a short lease and is SIGKILLed holding it.
void KillHolder(const std::string& dsn, const std::string& r, LockMode mode) {
  Signal locked;
  pid_t child = ForkChild([&] {
    absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(dsn);
    if (!s.ok()) return 2;
    LockOptions options;
    options.ttl = absl::Milliseconds(500);
    absl::StatusOr<Lock> lock = Lock::Create(*s, r, options);
    if (!lock.ok() || !lock->TryAcquire(mode).value_or(false)) return 3;
    locked.Notify();
    for (;;) pause();
  });
  assert_int_equal(locked.Wait(), 'x');
  KillChild(child);
}

// The conformance suite covers a killed writer's report and a clean
// release clearing it; these are the Redis markers' other rules.
void OwnerDeathAfterSigkill(void**) {
  const char* base = RequireRedis();
  for (const char* format : kRedisFormats) {
    const std::string dsn = FormatDsn(base, format);
    auto store = OpenStoreOrFail(dsn);
    const std::string r = UniqueResource(absl::StrCat("death-", format));
    // A holder whose lease ran out but who then released is not dead.
    Lock slow = MakeHeldLock(store, r, absl::Milliseconds(200));
    absl::SleepFor(absl::Milliseconds(400));
    // Released (Lock may report the overrun as Aborted: a kLeaseOverrun diagnostic).
    absl::Status late = slow.Release();
    if (!late.ok() && late.code() != absl::StatusCode::kAborted) {
      fail_msg("late release: %s", late.ToString().c_str());
    }
    Lock again = MakeHeldLock(store, r);
    assert_false(again.previous_owner_died());
  }
  // Symfony format: readers see a dead writer too; the next writer clears it.
  const std::string dsn = FormatDsn(base, "symfony");
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("death-readers");
  KillHolder(dsn, r, LockMode::kExclusive);
  Lock reader = MakeLock(store, r);
  ASSERT_OK(reader.Acquire(absl::Seconds(5), LockMode::kShared));
  assert_true(reader.previous_owner_died());
  ASSERT_OK(reader.Release());
  NextHolderIsToldOfTheDeathOnce(store, r, Ttl(absl::Seconds(30)));
  // A dead reader is not reported: only writers leave a marker.
  KillHolder(dsn, r, LockMode::kShared);
  Lock writer3 = MakeLock(store, r);
  ASSERT_OK(writer3.Acquire(absl::Seconds(5)));
  assert_false(writer3.previous_owner_died());
}

void StringTypeIsConflict(void**) {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  RedisClient raw(base);
  auto symfony = OpenStoreOrFail(FormatDsn(base, "symfony"));
  auto simple = OpenStoreOrFail(FormatDsn(base, "simple"));
  // A pre-5.2 Symfony lock (a plain string) is a conflict, in both modes,
  // and is left alone.
  const std::string r = UniqueResource("legacy");
  raw.Ok({"SET", r, "legacy-token", "PX", "30000"});
  Lock lock = MakeLock(symfony, r);
  assert_false(TryOrFail(lock));
  assert_false(TryOrFail(lock, LockMode::kShared));
  assert_false(Held(lock));
  ASSERT_OK(lock.Release());
  ASSERT_CODE(lock.Refresh(), absl::StatusCode::kFailedPrecondition);
  assert_string_equal(raw.Str({"GET", r})->c_str(), "legacy-token");
  // So the two formats exclude each other on one resource, both ways.
  const std::string r2 = UniqueResource("mixed");
  Lock sf = MakeHeldLock(symfony, r2), sp = MakeLock(simple, r2);
  assert_false(TryOrFail(sp));
  assert_false(Held(sp));
  assert_string_equal(raw.Str({"TYPE", r2})->c_str(), "zset");
  assert_true(Held(sf));
  ASSERT_OK(sf.Release());
  assert_true(TryOrFail(sp));
  assert_false(TryOrFail(sf));
  assert_false(TryOrFail(sf, LockMode::kShared));
  assert_true(Held(sp));
}

// --- PHP's Symfony RedisStore as a peer ------------------------------------------------------

#define REQUIRE_PHP() RequireRedisPhp(PhpRequired())

// The test server's DSN, with PHP's Symfony RedisStore at hand as a peer
// (skips, or fails under CI=true, without either).
const char* RequireRedisAndPhp() {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  REQUIRE_PHP();
  return base;
}

// What PHP's tries of `r` on `base` get now ("acquired" or "busy"):
// `exclusive` for "try" and, unless null, `shared` for "try-read".
void ExpectPhpGets(const char* base, const std::string& r, const char* exclusive,
                   const char* shared) {
  if (exclusive != nullptr) {
    assert_string_equal(PhpRedisTry(base, r, "try").c_str(), exclusive);
  }
  if (shared != nullptr) {
    assert_string_equal(PhpRedisTry(base, r, "try-read").c_str(), shared);
  }
}

void PhpExclusiveBothWays(void**) {
  const char* base = RequireRedisAndPhp();
  auto store = OpenStoreOrFail(FormatDsn(base, "symfony"));
  const std::string r = UniqueResource("php-x");
  {
    PhpRedisHolder php(base, r, "hold");
    Lock lock = MakeLock(store, r);
    assert_false(TryOrFail(lock));
    assert_false(TryOrFail(lock, LockMode::kShared));
    php.Release();
    assert_true(TryOrFail(lock));
    // ipclock holds: PHP cannot, in either mode.
    ExpectPhpGets(base, r, "busy", "busy");
    assert_true(Held(lock));
    ASSERT_OK(lock.Release());
  }
  ExpectPhpGets(base, r, "acquired", nullptr);
}

void PhpSharedBothWays(void**) {
  const char* base = RequireRedisAndPhp();
  auto store = OpenStoreOrFail(FormatDsn(base, "symfony"));
  const std::string r = UniqueResource("php-s");
  {
    // PHP reads: we may read, not write.
    PhpRedisHolder php(base, r, "hold-read");
    Lock reader = MakeLock(store, r), writer = MakeLock(store, r);
    assert_true(TryOrFail(reader, LockMode::kShared));
    assert_false(TryOrFail(writer));
    assert_false(TryOrFail(reader, LockMode::kExclusive));  // two readers: no promotion
    ASSERT_OK(reader.Release());
    php.Release();
    TakeAndRelease(writer);
  }
  // We read: PHP may read, not write.
  Lock reader = MakeLock(store, r);
  assert_true(TryOrFail(reader, LockMode::kShared));
  ExpectPhpGets(base, r, "busy", "acquired");
  assert_true(Held(reader));
  // A sole reader promotes; PHP then cannot read.
  assert_true(TryOrFail(reader, LockMode::kExclusive));
  ExpectPhpGets(base, r, nullptr, "busy");
  // Demoted: PHP reads again.
  assert_true(TryOrFail(reader, LockMode::kShared));
  ExpectPhpGets(base, r, nullptr, "acquired");
}

void PhpAgainstSimpleFormat(void**) {
  const char* base = RequireRedisAndPhp();
  // Symfony's "string type = conflict" keeps PHP out of our simple-format
  // locks, and ours see its sorted set as held.
  auto simple = OpenStoreOrFail(FormatDsn(base, "simple"));
  const std::string r = UniqueResource("php-simple");
  Lock lock = MakeHeldLock(simple, r);
  ExpectPhpGets(base, r, "busy", "busy");
  ASSERT_OK(lock.Release());
  PhpRedisHolder php(base, r, "hold");
  assert_false(TryOrFail(lock));
  php.Release();
  assert_true(TryOrFail(lock));
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(DsnErrors),
      cmocka_unit_test(ServerDownAtCreation),
      cmocka_unit_test(SymfonyLayout),
      cmocka_unit_test(SimpleLayout),
      cmocka_unit_test(ExpiryOnServerClock),
      cmocka_unit_test(InfiniteTtlRefused),
      cmocka_unit_test(Refresh),
      cmocka_unit_test(LeaseCountsFromAcquisition),
      cmocka_unit_test(SerializedKeyReleasedByAnotherProcess),
      cmocka_unit_test(FenceOnTheServer),
      cmocka_unit_test(OwnerDeathAfterSigkill),
      cmocka_unit_test(StringTypeIsConflict),
      cmocka_unit_test(SelectDb),
      cmocka_unit_test(Auth),
      cmocka_unit_test(AclUser),
      cmocka_unit_test(UnixSocket),
      cmocka_unit_test(NoscriptRecovery),
      cmocka_unit_test(RoundTrips),
      cmocka_unit_test(SecretHidesNames),
      cmocka_unit_test(ParseLockNaming),
      cmocka_unit_test(WarnsOnceWithoutSecret),
      cmocka_unit_test(ServerKilledWhileHeldAndWaiting),
      cmocka_unit_test(WaiterRecoversAfterRestart),
      cmocka_unit_test(LostReplyIsReleasedLater),
      cmocka_unit_test(PhpExclusiveBothWays),
      cmocka_unit_test(PhpSharedBothWays),
      cmocka_unit_test(PhpAgainstSimpleFormat),
  };
  return cmocka_run_group_tests_name("redis_store", tests, nullptr, KillOwnRedis);
}
