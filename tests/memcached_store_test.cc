// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The memcached store against the servers of tools/test-servers/memcached.sh
// ($IPCLOCK_TEST_MEMCACHED, _2) and servers it starts itself
// ($IPCLOCK_TEST_PORT_BASE+90.., to stop, starve or flush): Symfony's format
// on the wire (memcached's own text protocol, read raw), keys memcached
// cannot store refused, PHP's Symfony MemcachedStore as a peer both ways
// (binary and text protocol, one server and two), and every way a held lock
// is lost (deleted, flushed, taken over, evicted, server restart) reported
// as Aborted, while a server that is only down is Unavailable.
//
// Skipped without the servers (failed under CI=true); PHP's absence fails
// only with IPCLOCK_REQUIRE_PHP=1 (Meson: -Dphp_interop=enabled).

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/stores/memcached_store.h"
#include "ipclock/store_factory.h"
#include "own_server.h"
#include "platform/memcached_calls.h"
#include "spawn_util.h"
#include "loss_log.h"
#include "memcached_fixture.h"
#include "php_peer.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

using ipclock::Lock;
using ipclock::LockOptions;
using ipclock::Store;


const char* Env(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

// Skips (or fails under CI=true) without the test server.
#define REQUIRE_SERVER()                                                     \
  do {                                                                       \
    if (Env("IPCLOCK_TEST_MEMCACHED") == nullptr) {                          \
      if (Env("CI") != nullptr && strcmp(getenv("CI"), "true") == 0) {       \
        fail_msg("IPCLOCK_TEST_MEMCACHED is unset under CI=true");           \
      }                                                                      \
      print_message("skipped: IPCLOCK_TEST_MEMCACHED is unset "              \
                    "(tools/test-servers/memcached.sh starts one)\n");      \
      skip();                                                                \
    }                                                                        \
  } while (0)

std::string Dsn(const std::string& options = "secret=none") {
  return absl::StrCat(Env("IPCLOCK_TEST_MEMCACHED"), options.empty() ? "" : "?", options);
}
int Port() { return DsnPort(Env("IPCLOCK_TEST_MEMCACHED")); }

std::shared_ptr<Store> Open(const std::string& dsn) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) fail_msg("StoreFromDsn(%s): %s", dsn.c_str(), store.status().ToString().c_str());
  return *store;
}

std::string TokenOf(Lock& lock) {
  absl::StatusOr<absl::string_view> t = ipclock::internal::LockAccess::key(lock).Token();
  if (!t.ok()) fail_msg("token: %s", t.status().ToString().c_str());
  return std::string(*t);
}

// --- PHP ------------------------------------------------------------------------------

std::string PeerScript() { return PhpPeerScript("memcached_peer.php"); }

#define REQUIRE_PHP()                                                                         \
  REQUIRE_PHP_PEER((PhpPeerNeeds{PeerScript(), true, "memcached",                             \
                                 "php-cli php-memcached php-symfony-lock"}),                  \
                   PhpRequired())

std::string PhpTry(const std::string& servers, const char* protocol, const std::string& resource) {
  int code = 0;
  return RunForOutput({"php", PeerScript(), servers, protocol, resource, "try"}, &code);
}

// --- Tests ------------------------------------------------------------------------------

void DsnFormsAndBadInput(void**) {
  REQUIRE_SERVER();
  const std::string base = Env("IPCLOCK_TEST_MEMCACHED");
  const std::string host_port = base.substr(strlen("memcached://"));
  // Symfony's forms.
  for (const std::string& dsn :
       {absl::StrCat(base, "/5?secret=none"), absl::StrCat(base, "?weight=3&secret=none"),
        absl::StrCat("memcached:?host[", host_port, "]=2&secret=none"),
        absl::StrCat("memcached:?host[", host_port, "]&secret=none"),
        absl::StrCat(base, "?prefix_key=app_&connect_timeout=500&poll_timeout=500&"
                           "send_timeout=100000&recv_timeout=100000&retry_timeout=1&"
                           "serializer=igbinary&compression=false&tcp_nodelay=1&no_block=0&"
                           "libketama_compatible=1&binary_protocol=0&secret=none")}) {
    auto store = Open(dsn);
    Lock lock = LockOrFail(store, UniqueResource("dsn"));
    TakeAndRelease(lock);
  }
  // Bad input: each one a clear InvalidArgument, nothing made.
  for (const std::string& dsn :
       {absl::StrCat("memcached://user:pw@", host_port), absl::StrCat(base, "?binary_protocol=true"),
        absl::StrCat(base, "?weight=-1"), std::string("memcached:?host[127.0.0.1:99999]=1"),
        std::string("memcached:?host[:11211]=1"), absl::StrCat(base, "?serializer=bogus"),
        absl::StrCat(base, "?naming=parse-lock"), absl::StrCat(base, "?bogus=1"),
        std::string("memcached:relative/socket"), std::string("memcached://"),
        absl::StrCat(base, "?prefix_key=a%20b"), absl::StrCat(base, "?connect_timeout=-5"),
        absl::StrCat(base, "?secret=short"), std::string("memcached:?weight=3")}) {
    absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
    if (store.status().code() != absl::StatusCode::kInvalidArgument) {
      fail_msg("%s: expected InvalidArgument, got %s", dsn.c_str(),
               store.status().ToString().c_str());
    }
  }
  // Nothing listens: Unavailable, naming the server.
  const int free_port = FreeOwnPort(90);
  const std::string nobody = absl::StrCat("memcached://127.0.0.1:", free_port,
                                          "?connect_timeout=300&secret=none");
  absl::StatusOr<std::shared_ptr<Store>> down = ipclock::StoreFromDsn(nobody);
  ASSERT_CODE(down, absl::StatusCode::kUnavailable);
  assert_non_null(strstr(down.status().message().data(), absl::StrCat(free_port).c_str()));
}

void UnixSocketServer(void**) {
  OwnMemcached own;
  // Only the socket: memcached then listens on no TCP port.
  SkipIf(own.Start({"-s", "{socket}", "-a", "0700"}));
  auto store = Open(absl::StrCat("memcached://", own.socket_path(), "?secret=none"));
  std::string r = UniqueResource("sock");
  Lock a = HeldOrFail(store, r), b = LockOrFail(store, r);
  assert_false(TryOrFail(b));
  ASSERT_OK(a.Release());
  assert_true(TryOrFail(b));
}

void SymfonyFormatOnTheWire(void**) {
  REQUIRE_SERVER();
  auto store = Open(Dsn());
  LockOptions options;
  options.ttl = absl::Seconds(10);
  const std::string r = UniqueResource("wire");
  Lock lock = HeldOrFail(store, r, options);
  Raw raw = MetaGet(Port(), r);
  assert_true(raw.present);
  // The key is the resource, the value the 44-byte token, flags 0.
  assert_string_equal(raw.value.c_str(), TokenOf(lock).c_str());
  assert_int_equal(raw.value.size(), 44);
  assert_int_equal(raw.flags, 0);
  // ceil(ttl) + 1 s: the key outlives the lease on a clock of whole seconds.
  assert_true(raw.ttl >= 10 && raw.ttl <= 11);
  ASSERT_OK(lock.Refresh(absl::Seconds(20)));
  raw = MetaGet(Port(), r);
  assert_true(raw.ttl >= 20 && raw.ttl <= 21);
  ASSERT_OK(lock.Release());
  assert_false(MetaGet(Port(), r).present);
  // A lease memcached would read as a date is refused when the lock is
  // made, and a refresh to one when it is asked for.
  options.ttl = absl::Hours(24 * 31);
  ASSERT_CODE(ipclock::Lock::Create(store, UniqueResource("month"), options),
              absl::StatusCode::kInvalidArgument);
  options.ttl = absl::Seconds(10);
  Lock refreshed = HeldOrFail(store, UniqueResource("month"), options);
  ASSERT_CODE(refreshed.Refresh(absl::Hours(24 * 31)), absl::StatusCode::kInvalidArgument);
  ASSERT_OK(refreshed.Release());
}

void KeysMemcachedCannotStoreAreRefused(void**) {
  REQUIRE_SERVER();
  auto plain = Open(Dsn());
  const std::string tag = UniqueResource("k");
  for (const std::string& bad : {tag + " space", tag + "\nnewline", tag + std::string(1, '\x7f'),
                                 tag + std::string(1, '\0'), std::string(251, 'x')}) {
    Lock lock = LockOrFail(plain, bad);
    ASSERT_CODE(lock.TryAcquire(), absl::StatusCode::kInvalidArgument);
    assert_false(lock.is_acquired());
  }
  std::string longest = tag;
  longest.resize(250, 'y');
  Lock ok = HeldOrFail(plain, longest);
  // prefix_key counts: 2 + 250 bytes.
  auto prefixed = Open(Dsn("prefix_key=p_&secret=none"));
  Lock over = LockOrFail(prefixed, longest);
  ASSERT_CODE(over.TryAcquire(), absl::StatusCode::kInvalidArgument);
  // With a secret any name is a 64-digit key.
  auto hashed = Open(Dsn("secret=memcached-test-0123456789"));
  Lock odd = HeldOrFail(hashed, tag + " space\n\x01");
}

void PhpPeerBothWays(void**) {
  REQUIRE_SERVER();
  REQUIRE_PHP();
  const std::string servers = absl::StrCat("127.0.0.1:", Port());
  auto store = Open(Dsn());
  for (const char* protocol : {"binary", "text"}) {
    // PHP holds; ipclock is kept out, then gets it once PHP lets go.
    const std::string r = UniqueResource("php");
    PhpPeerHolder php({"php", PeerScript(), servers, protocol, r, "hold"});
    Lock ours = LockOrFail(store, r);
    assert_false(TryOrFail(ours));
    php.Release();
    assert_true(TryOrFail(ours));
    // ipclock holds; PHP sees our token and is kept out.
    int code = 0;
    assert_string_equal(
        RunForOutput({"php", PeerScript(), servers, protocol, r, "get"}, &code).c_str(),
        TokenOf(ours).c_str());
    assert_string_equal(PhpTry(servers, protocol, r).c_str(), "busy");
    ASSERT_OK(ours.Release());
    assert_string_equal(PhpTry(servers, protocol, r).c_str(), "acquired");
  }
}

void SeveralServersPlaceKeysAsPhpDoes(void**) {
  REQUIRE_SERVER();
  if (Env("IPCLOCK_TEST_MEMCACHED_2") == nullptr) {
    print_message("skipped: IPCLOCK_TEST_MEMCACHED_2 is unset\n");
    skip();
  }
  REQUIRE_PHP();
  const int p1 = Port();
  const int p2 = DsnPort(Env("IPCLOCK_TEST_MEMCACHED_2"));
  auto store = Open(absl::StrCat("memcached:?host[127.0.0.1:", p1, "]&host[127.0.0.1:", p2,
                                 "]&secret=none"));
  std::vector<Lock> held;
  std::vector<std::string> names;
  int on1 = 0, on2 = 0;
  for (int i = 0; i < 12; ++i) {
    names.push_back(UniqueResource("spread"));
    held.push_back(LockOrFail(store, names.back()));
    assert_true(TryOrFail(held.back()));
    on1 += MetaGet(p1, names.back()).present ? 1 : 0;
    on2 += MetaGet(p2, names.back()).present ? 1 : 0;
  }
  print_message("keys on the first server: %d, on the second: %d\n", on1, on2);
  assert_int_equal(on1 + on2, 12);  // each key on exactly one server
  assert_true(on1 > 0 && on2 > 0);  // and both in use
  const std::string servers = absl::StrCat("127.0.0.1:", p1, ",127.0.0.1:", p2);
  for (const char* protocol : {"binary", "text"}) {
    for (const std::string& n : names) {
      assert_string_equal(PhpTry(servers, protocol, n).c_str(), "busy");
    }
  }
}

void LostLockIsReported(void**) {
  REQUIRE_SERVER();
  auto store = Open(Dsn());
  const int port = Port();
  // Deleted behind our back.
  std::string r = UniqueResource("gone");
  Lock lock = HeldOrFail(store, r);
  assert_true(absl::StrContains(Command(port, absl::StrCat("delete ", r, "\r\n")), "DELETED"));
  absl::Status held = lock.CheckAcquired();
  ASSERT_CODE(held, absl::StatusCode::kAborted);
  assert_non_null(strstr(held.message().data(), "gone"));
  // A release that finds it gone says so.
  r = UniqueResource("gone-release");
  Lock second = HeldOrFail(store, r);
  Command(port, absl::StrCat("delete ", r, "\r\n"));
  ASSERT_CODE(second.Release(), absl::StatusCode::kAborted);
  // Taken over: another token in the key.
  r = UniqueResource("taken");
  Lock third = HeldOrFail(store, r);
  const std::string other(44, 'Z');
  assert_true(absl::StrContains(
      Command(port, absl::StrCat("set ", r, " 0 60 44\r\n", other, "\r\n")), "STORED"));
  ASSERT_CODE(third.Refresh(), absl::StatusCode::kAborted);
  held = third.CheckAcquired();
  ASSERT_CODE(held, absl::StatusCode::kAborted);
  assert_non_null(strstr(held.message().data(), "another owner"));
  // ...and its release leaves the other owner's key alone.
  assert_string_equal(MetaGet(port, r).value.c_str(), other.c_str());
  // A lock handed to another process (serialized) and lost there too.
  r = UniqueResource("handed");
  Lock handed = HeldOrFail(store, r);
  absl::StatusOr<std::string> text = handed.Serialize();
  ASSERT_OK(text);
  auto elsewhere = Open(Dsn());
  absl::StatusOr<Lock> received = Lock::FromSerialized(elsewhere, *text);
  ASSERT_OK(received);
  Command(port, absl::StrCat("delete ", r, "\r\n"));
  ASSERT_CODE(received->Release(), absl::StatusCode::kAborted);
}

void WatchReportsDeletedKey(void**) {
  REQUIRE_SERVER();
  auto store = Open(Dsn());
  const std::string r = UniqueResource("watched");
  Lock lock = HeldOrFail(store, r);
  std::atomic<int> lost{0};
  ipclock::LockWatch watch;
  ipclock::WatchOptions options;
  options.check_interval = absl::Milliseconds(100);
  options.diagnostics = [&](const ipclock::Diagnostic& loss) {
    if (absl::IsAborted(loss.status)) lost = 1;
  };
  absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(lock), options);
  ASSERT_OK(watched);
  absl::SleepFor(absl::Milliseconds(300));
  assert_int_equal(lost.load(), 0);  // a healthy lock raises nothing
  const double t0 = NowSeconds();
  Command(Port(), absl::StrCat("delete ", r, "\r\n"));
  while (lost.load() == 0 && NowSeconds() - t0 < 20) absl::SleepFor(absl::Milliseconds(10));
  assert_int_equal(lost.load(), 1);
  print_message("deleted key noticed after %.0f ms (interval 100 ms)\n",
                (NowSeconds() - t0) * 1e3);
  assert_true(watched->lost());
  ASSERT_CODE(watched->Release(), absl::StatusCode::kAborted);
}

// The watch's checks of a store's held locks are answered by one multi-get
// a round (counted through the client library's table, the real server
// answering), and a key lost among them is still found, the others staying
// held.
std::atomic<int> g_single_gets{0};
std::atomic<int> g_multi_gets{0};
// Set before CountingMget is put in the table, read by the watch's threads.
std::atomic<decltype(ipclock::MemcachedCalls::memcached_mget)::Function> g_real_mget{nullptr};
memcached_return_t CountingMget(memcached_st* mc, const char* const* keys,
                                const size_t* lengths, size_t count) {
  (count > 1 ? g_multi_gets : g_single_gets)++;
  return g_real_mget.load()(mc, keys, lengths, count);
}

std::atomic<int> g_adds{0};
std::atomic<decltype(ipclock::MemcachedCalls::memcached_add)::Function> g_real_add{nullptr};
memcached_return_t CountingAdd(memcached_st* mc, const char* key, size_t key_length,
                               const char* value, size_t value_length, time_t expiration,
                               uint32_t flags) {
  ++g_adds;
  return g_real_add.load()(mc, key, key_length, value, value_length, expiration, flags);
}

// A contended wait asks once (an add), then sleeps a first step (5 ms, less
// a quarter at most) before it asks again: a wait of 3 ms is two adds, the
// try and the look at the deadline. (A wait that asked at once after the
// Lock's try made three.)
void ContendedWaitAsksOnceThenSleeps(void**) {
  REQUIRE_SERVER();
  auto store = Open(Dsn());
  const std::string r = UniqueResource("mc-tries");
  Lock holder = HeldOrFail(store, r);
  Lock waiter = LockOrFail(store, r);
  g_real_add = ipclock::Memcached().memcached_add.get();
  ipclock::Memcached().memcached_add.Replace(&CountingAdd);
  absl::StatusOr<bool> waited = waiter.TryAcquireFor(absl::Milliseconds(3));
  ipclock::Memcached().memcached_add.Replace(g_real_add.load());
  ASSERT_OK(waited.status());
  assert_false(*waited);
  assert_int_equal(g_adds.load(), 2);
}

void LocksOfAStoreAreCheckedByOneRequest(void**) {
  REQUIRE_SERVER();
  auto store = Open(Dsn());
  constexpr int kLocks = 6;
  WatchedBatch batch(kLocks, store, "mc-shared", absl::Milliseconds(200));
  absl::SleepFor(absl::Milliseconds(300));
  g_real_mget = ipclock::Memcached().memcached_mget.get();
  ipclock::Memcached().memcached_mget.Replace(&CountingMget);
  absl::SleepFor(absl::Seconds(1));
  ipclock::Memcached().memcached_mget.Replace(g_real_mget.load());
  const int single = g_single_gets.load(), multi = g_multi_gets.load();
  print_message("over 1 s (%d locks, checked every 100 ms, the store's bound below the "
                "interval of 200 ms): %d gets of one key, %d of several\n",
                kLocks, single, multi);
  // About 10 rounds, one request each; a request a lock would be 60.
  assert_int_equal(single, 0);
  assert_true(multi >= 3);
  assert_true(multi <= 20);
  for (int i = 0; i < kLocks; ++i) assert_int_equal(batch.lost_at[i].load(), 0);
  // A deleted key and one taken over are found; the others stay held.
  Command(Port(), absl::StrCat("delete ", batch.names[0], "\r\n"));
  const std::string other(44, 'Z');
  assert_true(absl::StrContains(
      Command(Port(), absl::StrCat("set ", batch.names[1], " 0 60 44\r\n", other, "\r\n")),
      "STORED"));
  const double t0 = NowSeconds();
  while ((batch.lost_at[0].load() == 0 || batch.lost_at[1].load() == 0) && NowSeconds() - t0 < 20) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  assert_true(batch.lost_at[0].load() != 0);
  assert_true(batch.lost_at[1].load() != 0);
  absl::SleepFor(absl::Milliseconds(500));
  ExpectOnlyFirstLost(batch.held, 2, [&](size_t i) { return batch.lost_at[i].load() != 0; });
}

void EvictionLosesTheLock(void**) {
  OwnMemcached own;
  SkipIf(own.Start({"-m", "2"}));
  auto store = Open(absl::StrCat(own.dsn(), "?secret=none"));
  const std::string r = UniqueResource("evicted");
  LockOptions options;
  options.ttl = absl::Seconds(120);
  Lock lock = HeldOrFail(store, r, options);
  // Fill the 2 MB (about 17,000 keys of the lock's size) fifteen times over
  // with keys and values of the lock's sizes, so that they share its slab
  // class (memcached evicts within a class). The lock's key is not read
  // meanwhile: a read would make it recent and keep it.
  const std::string value(44, 'v');
  const int filled = 250000;
  std::string sets;
  for (int i = 0; i < filled; ++i) {
    std::string key = absl::StrCat("f", i);
    key.resize(r.size(), '_');
    absl::StrAppend(&sets, "set ", key, " 0 0 44 noreply\r\n", value, "\r\n");
  }
  absl::StrAppend(&sets, "version\r\n");
  RawExchange(own.port(), sets,
              [](const std::string& reply) { return absl::StrContains(reply, "VERSION"); }, 60);
  print_message("the lock's key was evicted after %d other keys\n", filled);
  absl::Status held = lock.CheckAcquired();
  ASSERT_CODE(held, absl::StatusCode::kAborted);
  assert_non_null(strstr(held.message().data(), "evicted"));
}

void ServerDownIsUnavailableRestartIsLoss(void**) {
  OwnMemcached own;
  SkipIf(own.Start());
  auto store = Open(absl::StrCat(own.dsn(), "?secret=none&connect_timeout=300&retry_timeout=1"));
  const std::string r = UniqueResource("down");
  Lock lock = HeldOrFail(store, r);
  own.Stop();
  // Down is not lost: the key may be back when the server is.
  ASSERT_CODE(lock.CheckAcquired(), absl::StatusCode::kUnavailable);
  Lock other = LockOrFail(store, UniqueResource("down-other"));
  ASSERT_CODE(other.TryAcquire(), absl::StatusCode::kUnavailable);
  ASSERT_CODE(other.Acquire(absl::Milliseconds(300)), absl::StatusCode::kUnavailable);
  assert_false(other.is_acquired());
  // A restart empties memcached: the lock is gone.
  own.Restart();
  absl::Status held = absl::UnavailableError("");
  const double t0 = NowSeconds();
  for (int i = 0; i < 100 && absl::IsUnavailable(held); ++i) {
    held = lock.CheckAcquired();  // the client retries the server after 1 s
    if (absl::IsUnavailable(held)) absl::SleepFor(absl::Milliseconds(100));
  }
  print_message("the loss was seen %.1f s after the restart\n", NowSeconds() - t0);
  ASSERT_CODE(held, absl::StatusCode::kAborted);
}

void ForkedChildUsesItsOwnConnection(void**) {
  REQUIRE_SERVER();
  auto store = Open(Dsn());
  const std::string r = UniqueResource("fork");
  // The child's own connection takes another resource and lets it go.
  ForkedChildIsAnotherHolder(store, r, [&](Lock&) {
    absl::StatusOr<Lock> other = Lock::Create(store, r + "-child");
    if (!other.ok() || !other->TryAcquire().value_or(false)) return 4;
    if (!other->Release().ok()) return 5;
    return 0;
  });
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(DsnFormsAndBadInput, StopOwnServers),
      cmocka_unit_test_teardown(UnixSocketServer, StopOwnServers),
      cmocka_unit_test_teardown(SymfonyFormatOnTheWire, StopOwnServers),
      cmocka_unit_test_teardown(KeysMemcachedCannotStoreAreRefused, StopOwnServers),
      cmocka_unit_test_teardown(PhpPeerBothWays, StopOwnServers),
      cmocka_unit_test_teardown(SeveralServersPlaceKeysAsPhpDoes, StopOwnServers),
      cmocka_unit_test_teardown(LostLockIsReported, StopOwnServers),
      cmocka_unit_test_teardown(WatchReportsDeletedKey, StopOwnServers),
      cmocka_unit_test_teardown(LocksOfAStoreAreCheckedByOneRequest, StopOwnServers),
      cmocka_unit_test_teardown(ContendedWaitAsksOnceThenSleeps, StopOwnServers),
      cmocka_unit_test_teardown(EvictionLosesTheLock, StopOwnServers),
      cmocka_unit_test_teardown(ServerDownIsUnavailableRestartIsLoss, StopOwnServers),
      cmocka_unit_test_teardown(ForkedChildUsesItsOwnConnection, StopOwnServers),
  };
  return cmocka_run_group_tests_name("memcached_store", tests, nullptr, nullptr);
}
