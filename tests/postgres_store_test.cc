// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The PostgreSQL store against a real server (tools/test-servers/postgres.sh
// exports its DSN as IPCLOCK_TEST_POSTGRES): lock-id vectors and the
// client-side hashtext against the server's, exclusion between processes,
// timed and forever waits, shared locks, stacking, a session killed under a
// held lock, connection failures, the transaction-level lock, and Symfony's
// PostgreSqlStore in PHP (tests/php/postgres_peer.php) as a peer.
//
// Tests that need the server skip when IPCLOCK_TEST_POSTGRES is unset, and
// fail instead under CI=true; the PHP tests skip without php-pgsql and
// php-symfony-lock.

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/stores/postgres_store.h"
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "stores/postgres/postgres_lock_id.h"
#include "postgres_fixture.h"
#include "session_store_cases.h"
#include "php_peer.h"  // last: they pull in cmocka.h

namespace ipclock_test {
namespace {

using ipclock::Lock;
using ipclock::LockMode;
using ipclock::PostgresLockIdScheme;
using ipclock::Store;

// --- The server ----------------------------------------------------------------

#define REQUIRE_SERVER() RequirePostgres()

const char* ServerDsn() { return getenv("IPCLOCK_TEST_POSTGRES"); }

// The DSN with query options appended.
std::string Dsn(absl::string_view options = "") { return WithQuery(ServerDsn(), options); }

std::shared_ptr<Store> NewStore(absl::string_view options = "") {
  return OpenStoreOrFail(Dsn(options));
}

// Whether a fresh store in a forked child gets `resource` at once: the
// verdict of another process, with a session of its own.
bool OtherProcessGets(const std::string& resource, LockMode mode = LockMode::kExclusive,
                      absl::string_view options = "") {
  return ForkedChildGets(Dsn(options), resource, mode);
}

using Conn = PgConn;

Conn Connect() { return ConnectTo(ServerDsn()); }

// --- Lock ids (no server) ---------------------------------------------------------

void LockIdVectors(void**) {
  assert_int_equal(ipclock::Crc32Ieee("123456789"), 0xCBF43926u);  // the CRC-32 check value
  assert_int_equal(ipclock::Crc32Ieee(""), 0u);
  assert_true(ipclock::PostgresLockId("invoice-42", PostgresLockIdScheme::kSymfony) ==
              4091648539LL);
  const std::pair<const char*, int32_t> hashtext[] = {
      {"", -1477818771},        {"a", 1075015857},
      {"foo", 1955559433},      {"abcdefghijkl", -1586087212},
      {"あいう", 575716533},
  };
  for (const auto& [text, want] : hashtext) {
    if (ipclock::PostgresHashText(text) != want) {
      fail_msg("hashtext('%s') = %d, want %d", text, ipclock::PostgresHashText(text), want);
    }
    // Sign-extended, not reinterpreted as unsigned.
    assert_true(ipclock::PostgresLockId(text, PostgresLockIdScheme::kLaravel) == want);
  }
  // SHA-256("invoice-42") starts 3c 30 cb c2 1c ...: read big-endian, signed.
  assert_true(ipclock::PostgresLockId("invoice-42", PostgresLockIdScheme::kNative) ==
              4337049738231944310LL);
  assert_true(ipclock::PostgresLockId("", PostgresLockIdScheme::kNative) ==
              -2039914840885289964LL);
}

// --- DSNs (no server) ---------------------------------------------------------------

// Opening `dsn` fails with `code`, saying `needle` and not the password
// ("hunter2...").
void ExpectRefusedWithoutPassword(const std::string& dsn, absl::StatusCode code,
                                  absl::string_view needle) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  ASSERT_CODE(store, code);
  const std::string msg(store.status().message());
  print_message("%s\n", msg.c_str());
  assert_true(absl::StrContains(msg, needle));
  assert_false(absl::StrContains(msg, "hunter2"));
}

void BadDsnsAreRefusedWithoutThePassword(void**) {
  const char* bad[] = {
      "postgresql+advisory://u:hunter2-secret@127.0.0.1:1/db?scheme=md5",
      "postgresql+advisory://u:hunter2-secret@127.0.0.1:1/db?level=transaction",
      "postgresql+advisory://u:hunter2-secret@127.0.0.1:1/db?level=statement",
      "postgresql+advisory://u:hunter2-secret@127.0.0.1:1/db?no_such_option=1",
      "postgresql+advisory://u:hunter2-secret@127.0.0.1:1/db?connect_timeout=-1",
      "postgresql+advisory://u@127.0.0.1:1/db?password=hunter2-secret",
      "postgresql+advisory://u:hunter2-secret@127.0.0.1:1/a/b",
      "postgresql+advisory:db",
  };
  for (const char* dsn : bad) {
    ExpectRefusedWithoutPassword(dsn, absl::StatusCode::kInvalidArgument, "");
  }
  ExpectRefusedWithoutPassword(bad[1], absl::StatusCode::kInvalidArgument,
                               "PostgresTransactionLock");
}

void ServerDownIsUnavailableNamingTheAddress(void**) {
  // Port 1 on loopback: nobody listens, the connection is refused at once.
  for (const char* dsn : {"postgresql+advisory://u:hunter2-secret@127.0.0.1:1/db",
                          "postgresql://u:hunter2-secret@127.0.0.1:1/db?sslmode=disable",
                          "pgsql+advisory://u:hunter2-secret@127.0.0.1:1/db?scheme=symfony"}) {
    ExpectRefusedWithoutPassword(dsn, absl::StatusCode::kUnavailable, "127.0.0.1:1");
  }
}

// --- Against the server ---------------------------------------------------------------

void BadPasswordIsPermissionDenied(void**) {
  REQUIRE_SERVER();
  std::string dsn = ServerDsn();
  // Swap the password for a wrong one: user:PASS@ -> user:wrong@.
  size_t colon = dsn.find(':', dsn.find("://") + 3);
  size_t at = dsn.find('@');
  assert_true(colon != std::string::npos && at != std::string::npos && colon < at);
  dsn.replace(colon + 1, at - colon - 1, "wrong-hunter2");
  ExpectRefusedWithoutPassword(dsn, absl::StatusCode::kPermissionDenied,
                               "password authentication failed");
}

// Random text valid in the server's encoding: UTF-8 code points (no NUL, no
// surrogates) of every length from 0 to 40 bytes or so, so that every tail
// length of the 12-byte blocks is hit.
std::string RandomUtf8(uint32_t seed_bytes) {
  std::string out;
  uint8_t buf[64];
  if (getrandom(buf, sizeof(buf), 0) != sizeof(buf)) abort();
  const size_t count = seed_bytes % 20;
  for (size_t i = 0; i < count; ++i) {
    uint32_t cp;
    switch (buf[i] % 4) {
      case 0: cp = 1 + buf[i + 20] % 0x7f; break;
      case 1: cp = 0x80 + (buf[i + 20] << 3 | buf[i + 40] % 8) % 0x780; break;
      case 2: cp = 0xe000 + (buf[i + 20] << 8 | buf[i + 40]) % 0x1000; break;
      default: cp = 0x10000 + (buf[i + 20] << 8 | buf[i + 40]); break;
    }
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xc0 | cp >> 6));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | cp >> 12));
      out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | cp >> 18));
      out.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
  return out;
}

void HashTextMatchesTheServer(void**) {
  REQUIRE_SERVER();
  Conn conn = Connect();
  // Text parameters must be valid in the server's encoding; the random
  // strings below are UTF-8, so check that is what the server takes.
  const std::string encoding = Query(conn.get(), "SHOW server_encoding");
  if (encoding != "UTF8") fail_msg("server_encoding is %s; this test sends UTF-8", encoding.c_str());
  std::vector<std::string> inputs = {"", "a", "foo", "abcdefghijkl", "あいう", "invoice-42"};
  for (int i = 0; i < 1000; ++i) {
    uint32_t r = 0;
    if (getrandom(&r, sizeof(r), 0) != sizeof(r)) abort();
    inputs.push_back(RandomUtf8(r));
  }
  for (const std::string& text : inputs) {
    const char* values[] = {text.c_str()};
    const int lengths[] = {static_cast<int>(text.size())};
    PGresult* r = PQexecParams(conn.get(), "SELECT hashtext($1::text)", 1, nullptr,
                               values, lengths, nullptr, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
      std::string msg = PQresultErrorMessage(r);
      PQclear(r);
      fail_msg("hashtext: %s", msg.c_str());
    }
    const int server = std::stoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    const int32_t ours = ipclock::PostgresHashText(text);
    if (server != ours) {
      fail_msg("hashtext of %zu bytes (\"%s\"): server %d, ipclock %d", text.size(),
               absl::CHexEscape(text).c_str(), server, ours);
    }
  }
}

void ExclusionBetweenProcesses(void**) {
  REQUIRE_SERVER();
  auto store = NewStore();
  const std::string r = UniqueResource("pg-excl");
  Lock lock = HeldOrFail(store, r);
  assert_false(OtherProcessGets(r));
  assert_false(OtherProcessGets(r, LockMode::kShared));
  // Other schemes are other ids: no exclusion across them.
  assert_true(OtherProcessGets(r, LockMode::kExclusive, "scheme=symfony"));
  ASSERT_OK(lock.Release());
  assert_true(OtherProcessGets(r));
}

void SharedLocksBetweenProcesses(void**) {
  REQUIRE_SERVER();
  auto store = NewStore();
  const std::string r = UniqueResource("pg-shared");
  Lock reader = HeldSharedOrFail(store, r);
  assert_true(OtherProcessGets(r, LockMode::kShared));
  assert_false(OtherProcessGets(r, LockMode::kExclusive));
  // A sole reader promotes atomically: it never holds nothing in between.
  assert_true(TryOrFail(reader, LockMode::kExclusive));
  assert_false(OtherProcessGets(r, LockMode::kShared));
  assert_true(TryOrFail(reader, LockMode::kShared));  // and demotes
  assert_true(OtherProcessGets(r, LockMode::kShared));
  assert_false(OtherProcessGets(r, LockMode::kExclusive));
  ASSERT_OK(reader.Release());
  // Conversions left nothing stacked behind: one release freed it all.
  assert_true(OtherProcessGets(r, LockMode::kExclusive));
}

void NoStacking(void**) {
  REQUIRE_SERVER();
  auto store = NewStore();
  const std::string r = UniqueResource("pg-stack");
  Lock lock = HeldOrFail(store, r);
  // Saving again must not take the advisory lock a second time in the
  // session, or one unlock would leave it held.
  ASSERT_OK(ipclock::StoreCalls::Acquire(*store, ipclock::internal::LockAccess::key(lock), LockMode::kExclusive, ipclock::Deadline::Past()));
  TakeAndRelease(lock);
  assert_true(OtherProcessGets(r));
  // Two stores in one process are two sessions: they exclude each other,
  // as do two Locks of one store (one session per held key).
  auto other_store = NewStore();
  Lock a = LockOrFail(store, r);
  Lock b = LockOrFail(other_store, r);
  Lock c = LockOrFail(store, r);
  assert_true(TryOrFail(a));
  assert_false(TryOrFail(b));
  assert_false(TryOrFail(c));
  ASSERT_OK(a.Release());
  assert_true(TryOrFail(b));
  assert_false(TryOrFail(a));
  ASSERT_OK(b.Release());
  // Released sessions go back to the pool and serve the next key without
  // carrying anything over.
  TakeAndRelease(c);
  assert_true(OtherProcessGets(r));
}

void TimedAndForeverWaits(void**) {
  REQUIRE_SERVER();
  auto store = NewStore();
  const std::string r = UniqueResource("pg-wait");
  Signal locked;
  const std::string dsn = Dsn();
  // A holder in another process that lets go after 1.5 s.
  pid_t holder = ForkChild([&] {
    absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(dsn);
    if (!s.ok()) return 2;
    absl::StatusOr<Lock> lock = Lock::Create(*s, r);
    if (!lock.ok() || !lock->TryAcquire().value_or(false)) return 3;
    locked.Notify();
    usleep(1500 * 1000);
    return lock->Release().ok() ? 0 : 4;
  });
  assert_int_equal(locked.Wait(), 'x');
  Lock waiter = LockOrFail(store, r);
  double t0 = NowSeconds();
  ASSERT_CODE(waiter.Acquire(absl::Milliseconds(300)), absl::StatusCode::kDeadlineExceeded);
  double waited = NowSeconds() - t0;
  print_message("timed wait gave up after %.3f s (asked 0.3 s)\n", waited);
  if (waited < 0.29 || waited > 5) fail_msg("waited %.3f s for a 0.3 s timeout", waited);
  // The session of the failed wait went back to the pool; its lock_timeout
  // was LOCAL, so a wait without a deadline on it does not give up at 0.3 s.
  t0 = NowSeconds();
  ASSERT_OK(waiter.Acquire());
  waited = NowSeconds() - t0;
  print_message("forever wait got the lock after %.3f s\n", waited);
  assert_true(waited > 0.5);
  assert_int_equal(WaitChild(holder), 0);
  ASSERT_OK(waiter.Release());
}

SessionStore Sessions() {
  SessionStore s;
  s.dsn = Dsn();
  s.tag = "pg";
  s.end_holder = [](const std::string& resource) {
    assert_int_equal(TerminateHolder(Connect().get(), resource), 1);
  };
  s.after_loss = [](const std::shared_ptr<Store>& store, Lock& lost) {
    // A release of that key says why instead of succeeding.
    absl::Status del =
        ipclock::StoreCalls::Release(*store, ipclock::internal::LockAccess::key(lost));
    ASSERT_CODE(del, absl::StatusCode::kAborted);
    print_message("%s\n", del.ToString().c_str());
    assert_true(absl::StrContains(del.message(), "the session ended"));
    assert_true(absl::StrContains(del.message(), "administrator command"));
  };
  s.release_says = "the session ended";
  s.probe = [](Store& store, ipclock::Key& key) {
    return ipclock::StoreCalls::IsHeld(store, key).status();
  };
  return s;
}

SessionSuite kSessionSuite = {"IPCLOCK_TEST_POSTGRES", Sessions};

void KilledPooledSessionIsReplaced(void**) {
  REQUIRE_SERVER();
  auto store = NewStore("application_name=ipclock-pool-test");
  const std::string r = UniqueResource("pg-pool");
  Lock lock = HeldOrFail(store, r);
  ASSERT_OK(lock.Release());  // its session is idle in the pool now
  Conn admin = Connect();
  const std::string ended = Query(
      admin.get(), "SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 10000) FROM "
                   "pg_stat_activity WHERE application_name = 'ipclock-pool-test') t");
  assert_true(std::stoi(ended) >= 1);
  assert_true(TryOrFail(lock));  // a dead idle session costs a retry, not an error
  assert_false(OtherProcessGets(r));
}

// doc/stores.md: acquire + release on an open connection costs two round trips.
// The server counts them: every simple-query message outside a transaction
// block runs as one transaction, and pg_stat_database.xact_commit counts
// each (read-only ones too), so the commits of a database that only the
// store uses are its round trips. Counted on the suite's own server (no
// autovacuum worker runs transactions there), in a database of the test's
// own, as the difference between two runs that differ only in the number of
// cycles: connecting and the session's setup cancel out. A backend adds its
// counts when it exits, before it leaves pg_stat_activity.
void AcquireReleaseIsTwoRoundTrips(void**) {
  PostgresServer& own = OwnPostgres();
  PgConn admin = ConnectTo(own.dsn());
  static int run = 0;
  const std::string db = absl::StrCat("rtt_", getpid(), "_", run++);
  Query(admin.get(), absl::StrCat("CREATE DATABASE ", db));
  auto counter = [&](const char* column) {
    return std::stol(Query(admin.get(), absl::StrCat("SELECT ", column,
                                                     " FROM pg_stat_database WHERE datname = '",
                                                     db, "'")));
  };
  struct Counts {
    long commits;
    long rollbacks;
  };
  auto transactions = [&](int cycles) {
    const long commits = counter("xact_commit");
    const long rollbacks = counter("xact_rollback");
    {
      absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(own.dsn(db));
      ASSERT_OK(store);
      Lock lock = LockOrFail(*store, UniqueResource("pg-rtt"));
      for (int i = 0; i < cycles; ++i) {
        TakeAndRelease(lock);
      }
    }
    const double until = NowSeconds() + 30;
    while (Query(admin.get(), absl::StrCat("SELECT count(*) FROM pg_stat_activity "
                                           "WHERE datname = '", db, "'")) != "0") {
      if (NowSeconds() > until) fail_msg("the store's sessions did not end");
      absl::SleepFor(absl::Milliseconds(20));
    }
    return Counts{counter("xact_commit") - commits, counter("xact_rollback") - rollbacks};
  };
  constexpr int kCycles = 50;
  transactions(1);  // a database's first session does one-off work
  const Counts base = transactions(1);
  const Counts many = transactions(1 + kCycles);
  print_message("%d acquire+release cycles: %ld transactions (server count), %ld rolled back\n",
                kCycles, many.commits - base.commits, many.rollbacks - base.rollbacks);
  assert_int_equal(many.commits - base.commits, 2 * kCycles);
  assert_int_equal(many.rollbacks - base.rollbacks, 0);

  // The time, printed only (tools/bench measures it on a quiet machine).
  auto store = NewStore();
  Lock lock = LockOrFail(store, UniqueResource("pg-cost"));
  Conn conn = Connect();
  constexpr int kRounds = 200;
  for (int i = 0; i < 20; ++i) Query(conn.get(), "SELECT 1");
  double t0 = NowSeconds();
  for (int i = 0; i < kRounds; ++i) Query(conn.get(), "SELECT 1");
  const double select_us = (NowSeconds() - t0) / kRounds * 1e6;
  t0 = NowSeconds();
  for (int i = 0; i < kRounds; ++i) {
    TakeAndRelease(lock);
  }
  const double lock_us = (NowSeconds() - t0) / kRounds * 1e6;
  print_message("SELECT 1: %.1f us; TryAcquire+Release: %.1f us (%.2f times)\n", select_us,
                lock_us, lock_us / select_us);
}

// --- Transaction-level locks ---------------------------------------------------------

void TransactionLock(void**) {
  REQUIRE_SERVER();
  const std::string r = UniqueResource("pg-xact");
  Conn a = Connect();
  Conn b = Connect();
  ipclock::PostgresTransactionLock xa(a.get());
  ipclock::PostgresTransactionLock xb(b.get());
  // Outside a transaction the lock would end with its own statement.
  ASSERT_CODE(xa.TryAcquire(r), absl::StatusCode::kFailedPrecondition);

  Query(a.get(), "BEGIN");
  absl::StatusOr<bool> got = xa.TryAcquire(r);
  ASSERT_OK(got);
  assert_true(*got);
  // Session and transaction advisory locks share one id space.
  auto store = NewStore();
  Lock session_lock = LockOrFail(store, r);
  assert_false(TryOrFail(session_lock));

  Query(b.get(), "BEGIN");
  Query(b.get(), "SET LOCAL lock_timeout = '7s'");
  got = xb.TryAcquire(r);
  ASSERT_OK(got);
  assert_false(*got);
  double t0 = NowSeconds();
  ASSERT_CODE(xb.Acquire(r, absl::Milliseconds(300)), absl::StatusCode::kDeadlineExceeded);
  double waited = NowSeconds() - t0;
  if (waited < 0.29 || waited > 5) fail_msg("waited %.3f s for a 0.3 s timeout", waited);
  // The caller's transaction survived the timeout, with its own settings.
  assert_int_equal(PQtransactionStatus(b.get()), PQTRANS_INTRANS);
  assert_string_equal(Query(b.get(), "SHOW lock_timeout").c_str(), "7s");

  Query(a.get(), "COMMIT");  // releases a's lock
  ASSERT_OK(xb.Acquire(r, absl::Seconds(5)));
  assert_string_equal(Query(b.get(), "SHOW lock_timeout").c_str(), "7s");
  assert_false(TryOrFail(session_lock));
  // Released with the top-level transaction, not with a savepoint.
  Query(b.get(), "SAVEPOINT s1");
  Query(b.get(), "RELEASE SAVEPOINT s1");
  assert_false(TryOrFail(session_lock));
  Query(b.get(), "ROLLBACK");
  TakeAndRelease(session_lock);

  // Shared transaction locks coexist with each other only.
  Query(a.get(), "BEGIN");
  Query(b.get(), "BEGIN");
  assert_true(*xa.TryAcquire(r, LockMode::kShared));
  assert_true(*xb.TryAcquire(r, LockMode::kShared));
  assert_false(TryOrFail(session_lock));
  assert_true(TryOrFail(session_lock, LockMode::kShared));
  Query(a.get(), "COMMIT");
  Query(b.get(), "COMMIT");
}

// --- PHP's Symfony PostgreSqlStore as a peer ---------------------------------------------

std::string PeerScript() { return PhpPeerScript("postgres_peer.php"); }

PhpPeerNeeds PeerNeeds() {
  return {PeerScript(), true, "pdo_pgsql", "php-cli php-pgsql php-symfony-lock"};
}

#define REQUIRE_PHP()                     \
  do {                                    \
    REQUIRE_SERVER();                     \
    REQUIRE_PHP_PEER(PeerNeeds(), false); \
  } while (0)

std::string PhpTry(const std::string& resource, const char* mode) {
  return RunPhpPeer({"php", PeerScript(), ServerDsn(), resource, mode});
}

// A PHP peer that holds `resource` until Release().
class PhpHolder : public PhpPeerHolder {
 public:
  PhpHolder(const std::string& resource, const char* mode)
      : PhpPeerHolder({"php", PeerScript(), ServerDsn(), resource, mode}) {}
};

void PhpHoldsIpclockWaits(void**) {
  REQUIRE_PHP();
  auto store = NewStore("scheme=symfony");
  const std::string r = UniqueResource("invoice");
  {
    PhpHolder php(r, "hold");
    Lock lock = LockOrFail(store, r);
    assert_false(TryOrFail(lock));
    assert_false(TryOrFail(lock, LockMode::kShared));
    php.Release();
    assert_true(TryOrFail(lock));
  }
  {
    PhpHolder php(r, "hold-read");
    Lock lock = LockOrFail(store, r);
    assert_false(TryOrFail(lock));
    assert_true(TryOrFail(lock, LockMode::kShared));
    ASSERT_OK(lock.Release());
    php.Release();
    assert_true(TryOrFail(lock));
  }
  // The native scheme is another id: it does not meet PHP's locks.
  PhpHolder php(r, "hold");
  auto native = NewStore();
  Lock other = HeldOrFail(native, r);
}

void IpclockHoldsPhpWaits(void**) {
  REQUIRE_PHP();
  auto store = NewStore("scheme=symfony");
  const std::string r = "invoice-42";  // the interop vector's resource
  Lock lock = LockOrFail(store, r);
  if (!TryOrFail(lock)) fail_msg("invoice-42 is held by someone else on the test server");
  assert_string_equal(PhpTry(r, "try").c_str(), "busy");
  assert_string_equal(PhpTry(r, "try-read").c_str(), "busy");
  assert_true(TryOrFail(lock, LockMode::kShared));  // demote
  assert_string_equal(PhpTry(r, "try-read").c_str(), "acquired");
  assert_string_equal(PhpTry(r, "try").c_str(), "busy");
  ASSERT_OK(lock.Release());
  assert_string_equal(PhpTry(r, "try").c_str(), "acquired");
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(LockIdVectors),
      cmocka_unit_test(BadDsnsAreRefusedWithoutThePassword),
      cmocka_unit_test(ServerDownIsUnavailableNamingTheAddress),
      cmocka_unit_test(BadPasswordIsPermissionDenied),
      cmocka_unit_test(HashTextMatchesTheServer),
      cmocka_unit_test(ExclusionBetweenProcesses),
      cmocka_unit_test(SharedLocksBetweenProcesses),
      cmocka_unit_test(NoStacking),
      cmocka_unit_test(TimedAndForeverWaits),
      cmocka_unit_test_prestate(KilledSessionLosesTheLock, &kSessionSuite),
      cmocka_unit_test(KilledPooledSessionIsReplaced),
      cmocka_unit_test_prestate(ForkedChildCannotUseParentsKey, &kSessionSuite),
      cmocka_unit_test(AcquireReleaseIsTwoRoundTrips),
      cmocka_unit_test(TransactionLock),
      cmocka_unit_test(PhpHoldsIpclockWaits),
      cmocka_unit_test(IpclockHoldsPhpWaits),
  };
  return cmocka_run_group_tests_name("postgres_store", tests, nullptr, nullptr);
}
