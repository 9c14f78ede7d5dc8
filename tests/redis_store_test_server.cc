// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Redis store's tests of the server side, run by redis_store_test.cc's
// table: SELECT, AUTH and ACL users, a Unix socket, SCRIPT FLUSH, round
// trips, key names with and without a secret, and killing the server while a
// lock is held and while a waiter waits.

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

using ipclock::Lock;
using ipclock::LockOptions;
using ipclock::Store;

namespace {

// Vectors from tests/key_naming_test.cc (openssl / python3 hashlib).
constexpr char kSecret[] = "0123456789abcdef";
constexpr char kHmacInvoice[] =
    "592acdb0caa32af555a25a5adea7aafea58f3635e21b62900d0c461a8fa3d782";
constexpr char kShaInvoice[] =
    "3c304bc21c84147600a54c27b7bccab936b33065bc7ea051a1a9af00e3378ff3";

}  // namespace

void SelectDb(void**) {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  if (absl::StrContains(base, '?')) skip();  // a DSN with its own query: not ours to edit
  auto store = OpenStoreOrFail(absl::StrCat(base, "/3?secret=none"));
  assert_true(absl::StrContains(store->Describe(), "/3"));
  const std::string r = UniqueResource("select");
  Lock lock = MakeHeldLock(store, r);
  RedisClient db3(absl::StrCat(base, "/3"));
  RedisClient db0(base);
  assert_int_equal(db3.Int({"EXISTS", r}), 1);
  assert_int_equal(db0.Int({"EXISTS", r}), 0);
  absl::StatusOr<std::shared_ptr<Store>> bad = ipclock::StoreFromDsn(absl::StrCat(base, "/99999?secret=none"));
  ASSERT_CODE(bad, absl::StatusCode::kInvalidArgument);
  assert_true(Contains(bad.status(), "SELECT 99999"));
}

void Auth(void**) {
  const char* auth = RequireRedis("IPCLOCK_TEST_REDIS_AUTH");
  absl::StatusOr<ipclock::Dsn> parsed = ipclock::Dsn::Parse(auth);
  ASSERT_OK(parsed);
  const std::string password = parsed->password();
  const std::string server = absl::StrCat(parsed->host(), ":", parsed->port());
  assert_false(password.empty());
  {
    auto store = OpenStoreOrFail(WithOptions(auth, "secret=none"));
    assert_false(absl::StrContains(store->Describe(), password));
    Lock lock = MakeHeldLock(store, UniqueResource("auth"));
  }
  // Symfony's form: the password alone before '@'.
  OpenStoreOrFail(absl::StrCat("redis://", password, "@", server, "?secret=none"));
  // A wrong password: PermissionDenied, naming the server, no password.
  const std::string wrong = "wrong-password-1234";
  absl::StatusOr<std::shared_ptr<Store>> s =
      ipclock::StoreFromDsn(absl::StrCat("redis://:", wrong, "@", server, "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  print_message("%s\n", s.status().ToString().c_str());
  assert_true(Contains(s.status(), server));
  assert_false(Contains(s.status(), wrong));
  assert_false(Contains(s.status(), password));
  // None at all: PermissionDenied saying that one is needed.
  s = ipclock::StoreFromDsn(absl::StrCat("redis://", server, "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  assert_true(Contains(s.status(), "NOAUTH"));
}

void AclUser(void**) {
  RedisServer& own = OwnRedis();
  RedisClient admin(own.dsn());
  admin.Ok({"ACL", "SETUSER", "locker", "reset", "on", ">locker-pass-1234", "~*", "&*", "+@all"});
  {
    auto store = OpenStoreOrFail(
        absl::StrCat("redis://locker:locker-pass-1234@", own.server(), "?secret=none"));
    assert_true(absl::StrContains(store->Describe(), "locker@"));
    Lock lock = MakeLock(store, UniqueResource("acl"));
    TakeAndRelease(lock);
  }
  absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(
      absl::StrCat("redis://locker:not-the-pass-9876@", own.server(), "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  assert_false(Contains(s.status(), "not-the-pass"));
  // A user without EVALSHA: refused when the scripts load, at creation.
  admin.Ok({"ACL", "SETUSER", "reader", "reset", "on", ">reader-pass-1234", "~*", "+@read"});
  s = ipclock::StoreFromDsn(absl::StrCat("redis://reader:reader-pass-1234@", own.server(), "?secret=none"));
  ASSERT_CODE(s, absl::StatusCode::kPermissionDenied);
  assert_false(Contains(s.status(), "reader-pass"));
  admin.Ok({"ACL", "DELUSER", "locker", "reader"});
}

void UnixSocket(void**) {
  RedisServer& own = OwnRedis();
  auto store = OpenStoreOrFail(
      absl::StrCat("redis://", own.socket(), "?db=2&secret=none&command_timeout=0.5"));
  assert_true(absl::StrContains(store->Describe(), own.socket()));
  const std::string r = UniqueResource("socket");
  Lock lock = MakeHeldLock(store, r);
  RedisClient db2(absl::StrCat(own.dsn(), "/2"));
  assert_int_equal(db2.Int({"EXISTS", r}), 1);
}

void NoscriptRecovery(void**) {
  RedisServer& own = OwnRedis();
  RedisClient raw(own.dsn());
  for (const char* format : kRedisFormats) {
    auto store = OpenStoreOrFail(FormatDsn(own.dsn(), format));
    const std::string r = UniqueResource("noscript");
    Lock lock = MakeLock(store, r);
    TakeAndRelease(lock);
    raw.Ok({"SCRIPT", "FLUSH"});
    assert_true(TryOrFail(lock));  // NOSCRIPT, SCRIPT LOAD, EVALSHA again
    raw.Ok({"SCRIPT", "FLUSH"});
    ASSERT_OK(lock.Refresh(absl::Seconds(10)));
    raw.Ok({"SCRIPT", "FLUSH"});
    assert_true(Held(lock));
    raw.Ok({"SCRIPT", "FLUSH"});
    ASSERT_OK(lock.Release());
    assert_int_equal(raw.Int({"EXISTS", r}), 0);
  }
}

// Round trips our client made between two points, as the server counts them:
// socket reads it processed (total_reads_processed, Redis 6+), less those of
// the INFO calls themselves. One request per round trip is one read; a
// pipeline of several commands would be one read too, so the test also
// counts the commands (cmdstat_evalsha). total_commands_processed is no use
// here: it also counts every redis.call() inside a script.
class RoundTripCounter {
 public:
  explicit RoundTripCounter(RedisClient& raw) : raw_(raw) {
    long long a = raw_.Info("stats", "total_reads_processed");
    long long b = raw_.Info("stats", "total_reads_processed");
    info_cost_ = b - a;
  }
  void Start() { start_ = raw_.Info("stats", "total_reads_processed"); }
  long long Stop() {
    return raw_.Info("stats", "total_reads_processed") - start_ - info_cost_;
  }

 private:
  RedisClient& raw_;
  long long info_cost_ = 0;
  long long start_ = 0;
};

void RoundTrips(void**) {
  RedisServer& own = OwnRedis();
  RedisClient raw(own.dsn());
  RoundTripCounter counter(raw);
  for (const char* format : kRedisFormats) {
    auto store = OpenStoreOrFail(FormatDsn(own.dsn(), format));
    const std::string r = UniqueResource("rtt");
    Lock lock = MakeLock(store, r);
    assert_true(TryOrFail(lock));  // warm: connected, scripts loaded
    ASSERT_OK(lock.Release());

    const long long evalsha_before = raw.Info("commandstats", "cmdstat_evalsha");
    counter.Start();
    TakeAndRelease(lock);
    const long long n = counter.Stop();
    const long long evalsha = raw.Info("commandstats", "cmdstat_evalsha") - evalsha_before;
    print_message("format=%s: acquire + release = %lld round trips (%lld EVALSHA)\n", format, n,
                  evalsha);
    assert_int_equal(n, 2);
    assert_int_equal(evalsha, 2);

    // A busy try is one round trip too; so are refresh and check.
    Lock holder = MakeHeldLock(store, r);
    counter.Start();
    assert_false(TryOrFail(lock));
    assert_int_equal(counter.Stop(), 1);
    // A contended wait asks once, then sleeps a first step (5 ms, less a
    // quarter at most) before it asks again: a wait of 3 ms is two round
    // trips, the try and the look at the deadline. (A wait that asked at
    // once after the Lock's try made three.)
    counter.Start();
    absl::StatusOr<bool> waited = lock.TryAcquireFor(absl::Milliseconds(3));
    ASSERT_OK(waited.status());
    assert_false(*waited);
    assert_int_equal(counter.Stop(), 2);
    counter.Start();
    ASSERT_OK(holder.Refresh());
    assert_int_equal(counter.Stop(), 1);
    counter.Start();
    assert_true(Held(holder));
    assert_int_equal(counter.Stop(), 1);
    // A check that finds the lock lost is one too: the script says what
    // happened in the same reply.
    raw.Ok({"DEL", r});
    counter.Start();
    ASSERT_CODE(ipclock::StoreCalls::CheckHeld(*store, ipclock::internal::LockAccess::key(holder)),
                absl::StatusCode::kAborted);
    assert_int_equal(counter.Stop(), 1);
  }
}

void SecretHidesNames(void**) {
  RedisServer& own = OwnRedis();
  RedisClient raw(own.dsn());
  const std::string secret_file = absl::StrCat(MakeTempDir(), "/redis.secret");
  assert_true(WriteFile(secret_file, absl::StrCat(kSecret, "\n")));
  raw.Ok({"FLUSHDB"});
  auto store = OpenStoreOrFail(
      WithOptions(own.dsn(), absl::StrCat("prefix=app:&secret_file=", secret_file)));
  Lock lock = MakeHeldLock(store, "invoice-42");
  const std::string key = absl::StrCat("app:", kHmacInvoice);
  assert_int_equal(raw.Int({"EXISTS", key}), 1);
  assert_int_equal(raw.Int({"EXISTS", key + ":ipclock"}), 1);
  RawReply keys = raw.Cmd({"KEYS", "*invoice*"});
  assert_int_equal(keys->elements, 0);
  assert_false(absl::StrContains(store->Describe(), kSecret));
}

void ParseLockNaming(void**) {
  RedisServer& own = OwnRedis();
  RedisClient raw(own.dsn());
  const std::string secret_file = absl::StrCat(MakeTempDir(), "/parse.secret");
  assert_true(WriteFile(secret_file, kSecret));
  // naming=parse-lock implies format=simple.
  auto keyed = OpenStoreOrFail(
      WithOptions(own.dsn(), absl::StrCat("naming=parse-lock&secret_file=", secret_file)));
  assert_false(keyed->capabilities().shared);
  const std::string key = absl::StrCat("parse-stack:lock:v1:", kHmacInvoice);
  raw.Ok({"DEL", key});
  {
    Lock lock = MakeHeldLock(keyed, "invoice-42");
    assert_string_equal(raw.Str({"GET", key})->c_str(), TokenOf(lock).c_str());
  }
  assert_int_equal(raw.Int({"EXISTS", key}), 0);
  // A Parse::Lock peer holds it (SET NX PX); we wait; its compare-and-delete
  // releases it.
  raw.Ok({"SET", key, "ruby-peer-token", "NX", "PX", "30000"});
  Lock lock = MakeLock(keyed, "invoice-42");
  assert_false(TryOrFail(lock));
  const std::string cad =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
  assert_int_equal(raw.Int({"EVAL", cad, "1", key, "ruby-peer-token"}), 1);
  assert_true(TryOrFail(lock));
  // ...and the peer's compare-and-delete cannot release ours.
  assert_int_equal(raw.Int({"EVAL", cad, "1", key, "ruby-peer-token"}), 0);
  assert_true(Held(lock));
  ASSERT_OK(lock.Release());
  // Without a secret: plain SHA-256.
  auto unkeyed = OpenStoreOrFail(WithOptions(own.dsn(), "naming=parse-lock&secret=none"));
  Lock plain = MakeHeldLock(unkeyed, "invoice-42");
  assert_string_equal(raw.Str({"GET", absl::StrCat("parse-stack:lock:v1:", kShaInvoice)})->c_str(),
                      TokenOf(plain).c_str());
  // Parse::Lock's limit on names.
  Lock too_long = MakeHeldLock(unkeyed, std::string(1024, 'x'));
  LockOptions big;
  big.key_options.max_resource_bytes = 4096;
  absl::StatusOr<Lock> over = Lock::Create(unkeyed, std::string(1025, 'x'), big);
  ASSERT_OK(over);
  ASSERT_CODE(over->TryAcquire(), absl::StatusCode::kInvalidArgument);
}

void WarnsOnceWithoutSecret(void**) {
  const char* base = RequireRedis("IPCLOCK_TEST_REDIS");
  const std::string dir = MakeTempDir();
  auto stderr_of = [&](const std::vector<std::string>& dsns) {
    const std::string path = absl::StrCat(dir, "/stderr");
    pid_t pid = ForkChild([&] {
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0 || dup2(fd, 2) < 0) return 2;
      for (const std::string& d : dsns) {
        if (!ipclock::StoreFromDsn(d).ok()) return 3;
      }
      return 0;
    });
    assert_int_equal(WaitChild(pid), 0);
    return ReadFileOrEmpty(path);
  };
  std::string out = stderr_of({base, base, WithOptions(base, "format=simple")});
  size_t first = out.find("ipclock: warning:");
  assert_true(first != std::string::npos);
  assert_true(out.find("ipclock: warning:", first + 1) == std::string::npos);
  out = stderr_of({WithOptions(base, "secret=none"), WithOptions(base, absl::StrCat("secret=", kSecret))});
  assert_true(out.find("ipclock: warning:") == std::string::npos);
}

// --- Killing the server -------------------------------------------------------------------

// A lock held through one store on the suite's own server, and a second
// store there for a waiter (short timeouts, so that a dead server is found
// within the tests' waits).
struct HeldOnOwnServer {
  explicit HeldOnOwnServer(const char* tag)
      : own(OwnRedis()),
        holder_store(OpenStoreOrFail(
            WithOptions(own.dsn(), "secret=none&connect_timeout=1&command_timeout=2"))),
        waiter_store(OpenStoreOrFail(
            WithOptions(own.dsn(), "secret=none&connect_timeout=1&command_timeout=2"))),
        r(UniqueResource(tag)),
        holder(MakeLock(holder_store, r)) {
    assert_true(TryOrFail(holder));
  }
  RedisServer& own;
  std::shared_ptr<Store> holder_store;
  std::shared_ptr<Store> waiter_store;
  const std::string r;
  Lock holder;
};

void ServerKilledWhileHeldAndWaiting(void**) {
  HeldOnOwnServer h("killed");

  struct Result {
    absl::Status status;
    bool acquired = false;
    double seconds = 0;
  } result;
  Lock waiter = MakeLock(h.waiter_store, h.r);
  std::thread t([&] {
    const double t0 = NowSeconds();
    result.status = waiter.Acquire(absl::Seconds(2));
    result.seconds = NowSeconds() - t0;
    result.acquired = waiter.is_acquired();
  });
  absl::SleepFor(absl::Milliseconds(300));
  h.own.Kill();
  t.join();
  print_message("waiter: %s after %.2f s\n", result.status.ToString().c_str(), result.seconds);
  // Fails closed: Unavailable, naming the server, after the whole wait.
  ASSERT_CODE(result.status, absl::StatusCode::kUnavailable);
  assert_false(result.acquired);
  assert_true(Contains(result.status, h.own.server()));
  assert_true(result.seconds >= 1.9);

  // The holder learns it cannot know.
  absl::Status held = h.holder.CheckAcquired();
  ASSERT_CODE(held, absl::StatusCode::kUnavailable);
  assert_true(Contains(held, h.own.server()));
  ASSERT_CODE(h.holder.Refresh(), absl::StatusCode::kUnavailable);
  absl::Status released = h.holder.Release();
  ASSERT_CODE(released, absl::StatusCode::kUnavailable);
  print_message("release: %s\n", released.ToString().c_str());
  // A try is Unavailable at once, not "busy".
  Lock probe = MakeLock(h.waiter_store, h.r);
  const double t0 = NowSeconds();
  ASSERT_CODE(probe.TryAcquire(), absl::StatusCode::kUnavailable);
  assert_true(NowSeconds() - t0 < 1.5);
  assert_false(probe.is_acquired());

  // Back (empty: no persistence): the same stores work again.
  h.own.Restart();
  Lock again = MakeHeldLock(h.holder_store, h.r);
  Lock rival = MakeLock(h.waiter_store, h.r);
  assert_false(TryOrFail(rival));
  ASSERT_OK(again.Release());
  assert_true(TryOrFail(rival));
}

void WaiterRecoversAfterRestart(void**) {
  HeldOnOwnServer h("restart");
  std::atomic<bool> done{false};
  absl::Status status;
  Lock waiter = MakeLock(h.waiter_store, h.r);
  std::thread t([&] {
    status = waiter.Acquire(absl::Seconds(15));
    done = true;
  });
  absl::SleepFor(absl::Milliseconds(300));
  h.own.Kill();
  absl::SleepFor(absl::Seconds(1));
  assert_false(done.load());  // still trying, not "acquired", not failed
  h.own.Restart();
  t.join();
  // The restarted server lost the holder's lock (no persistence), so the
  // waiter gets it, because the server said so. (Fencing is what protects
  // the work of a holder that lost its lock this way.)
  ASSERT_OK(status);
  assert_true(Held(waiter));
  assert_false(Held(h.holder));
}

// An acquire whose reply is lost (the server stalls past command_timeout)
// may still run on the server: the store releases that orphan as soon as it
// has a connection again, rather than leave it held for a whole lease.
void LostReplyIsReleasedLater(void**) {
  RedisServer& own = OwnRedis();
  auto store = OpenStoreOrFail(
      WithOptions(own.dsn(), "secret=none&command_timeout=0.2&connect_timeout=0.2"));
  RedisClient admin(own.dsn());
  RedisClient raw(own.dsn());
  const std::string r = UniqueResource("lost-reply");
  Lock warm = MakeLock(store, UniqueResource("warm"));
  assert_true(TryOrFail(warm));  // connected, scripts loaded
  std::thread stall([&] { admin.Ok({"DEBUG", "SLEEP", "1"}); });
  absl::SleepFor(absl::Milliseconds(150));
  Lock lock = MakeLock(store, r);
  absl::StatusOr<bool> got = lock.TryAcquire();
  stall.join();
  print_message("during the stall: %s\n", got.status().ToString().c_str());
  ASSERT_CODE(got, absl::StatusCode::kUnavailable);  // never "acquired"
  assert_false(lock.is_acquired());
  absl::SleepFor(absl::Milliseconds(100));
  print_message("orphan on the server after the stall: %lld\n", raw.Int({"EXISTS", r}));
  // The next use of the store reconnects and releases it first.
  Lock other = MakeHeldLock(store, UniqueResource("after-stall"));
  assert_int_equal(raw.Int({"EXISTS", r}), 0);
  Lock rival = MakeHeldLock(store, r);
}

}  // namespace ipclock_test
