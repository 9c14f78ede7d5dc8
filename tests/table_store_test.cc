// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table store (Symfony's PdoStore format) on PostgreSQL, MariaDB and
// SQLite, each test run once per database: the row as Symfony writes it,
// exclusion both ways with Symfony's PdoStore in PHP (tests/php/
// pdo_peer.php) as a separate process, expired rows taken over both ways,
// the table created by either side, Symfony's table and column options,
// expired rows collected, a lost row noticed (check, release, watch),
// refresh and renewal, a lock handed to another process, the PDO DSN
// forms, listing, and SQLite's WAL mode, busy timeout and DSN forms.
//
// Each test works in a table of its own (db_table=t_<random>), so that
// runs never meet. PostgreSQL and MariaDB come from tools/test-servers
// (IPCLOCK_TEST_POSTGRES_TABLE, IPCLOCK_TEST_MYSQL_TABLE): their tests skip
// without them, and fail instead under CI=true. SQLite uses a temp file.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/dsn.h"
#include "core/lock_access.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store_factory.h"
#include "ipclock/spi/store_interface.h"
#include "platform/sqlite_calls.h"
#include "spawn_util.h"
#include "ipclock_config.h"
#include "table_store_dbs.h"
#include "php_peer.h"  // last: it pulls in cmocka.h
#include "listed_locks.h"

namespace ipclock_test {
namespace {

using ipclock::Lock;
using ipclock::Store;

// --- PHP's PdoStore as a peer ------------------------------------------------------

std::string PeerScript() { return PhpPeerScript("pdo_peer.php"); }

PhpPeerNeeds PeerNeeds(const Db& db) {
  return {PeerScript(), true, db.pdo_ext,
          "php-cli php-symfony-lock php-pgsql php-mysql php-sqlite3"};
}

// DbUnderTest(), skipped without PHP's peer for that database as well.
const Db& PhpDbUnderTest(void** state) {
  const Db& db = DbUnderTest(state);
  REQUIRE_PHP_PEER(PeerNeeds(db), false);
  return db;
}

// Symfony's table options for the peer, as for the store.
void PeerEnv(const Db& db, const std::string& options) {
  setenv("PDO_USER", db.user.c_str(), 1);
  setenv("PDO_PASSWORD", db.password.c_str(), 1);
  setenv("PDO_OPTIONS", options.c_str(), 1);
}

std::string PhpTry(const Db& db, const std::string& options, const std::string& resource) {
  PeerEnv(db, options);
  return RunPhpPeer({"php", PeerScript(), db.pdo_dsn, resource, "try"});
}

class PhpHolder : public PhpPeerHolder {
 public:
  PhpHolder(const Db& db, const std::string& options, const std::string& resource,
            int ttl = 300)
      : PhpPeerHolder((PeerEnv(db, options),
                       std::vector<std::string>{"php", PeerScript(), db.pdo_dsn, resource,
                                                "hold", absl::StrCat(ttl)})) {}
};

// --- The format ---------------------------------------------------------------------

void RowAsSymfonyWritesIt(void** state) {
  const Db& db = DbUnderTest(state);
  const std::string table = Table();
  auto store = NewStore(db, "db_table=" + table);
  assert_string_equal(store->name().data(), db.name);
  assert_true(store->capabilities().expiring);
  assert_true(store->capabilities().serializable);
  assert_false(store->capabilities().blocking);
  Lock lock = HeldOrFail(store, "invoice-42");  // creates the table
  const std::string id = "3c304bc21c84147600a54c27b7bccab936b33065bc7ea051a1a9af00e3378ff3";
  const std::string token =
      db.query(absl::StrCat("SELECT key_token FROM ", table, " WHERE key_id = '", id, "'"));
  assert_int_equal(token.size(), 44);
  const int64_t left = Number(db.query(absl::StrCat(
      "SELECT key_expiration - ", db.now_sql, " FROM ", table, " WHERE key_id = '", id, "'")));
  // The TTL rounded up plus one second, counted from a whole second.
  if (left < 300 || left > 301) fail_msg("the row expires in %lld s", static_cast<long long>(left));
  ASSERT_OK(lock.Release());
  assert_string_equal(
      db.query(absl::StrCat("SELECT COUNT(*) FROM ", table)).c_str(), "0");
}

// --- Symfony's PdoStore as a peer ------------------------------------------------------

void PhpHoldsIpclockWaits(void** state) {
  const Db& db = PhpDbUnderTest(state);
  const std::string options = "db_table=" + Table();
  auto store = NewStore(db, options);
  const std::string r = UniqueResource("php-holds");
  PhpHolder php(db, options, r);  // PHP creates the table
  Lock lock = MakeLock(store, r);
  assert_false(Try(lock));
  ASSERT_CODE(lock.Acquire(absl::Milliseconds(300)), absl::StatusCode::kDeadlineExceeded);
  php.Release();
  assert_true(Try(lock));
}

void IpclockHoldsPhpWaits(void** state) {
  const Db& db = PhpDbUnderTest(state);
  const std::string options = "db_table=" + Table();
  auto store = NewStore(db, options);
  const std::string r = UniqueResource("ip-holds");
  Lock lock = HeldOrFail(store, r);  // ipclock creates the table
  assert_string_equal(PhpTry(db, options, r).c_str(), "busy");
  ASSERT_OK(lock.Release());
  assert_string_equal(PhpTry(db, options, r).c_str(), "acquired");
  // A PHP waiter (Symfony's blocking acquire polls the store) gets the lock
  // once ipclock lets go.
  assert_true(Try(lock));
  PeerEnv(db, options);
  PeerProcess waiter({"php", PeerScript(), db.pdo_dsn, r, "wait"});
  absl::SleepFor(absl::Milliseconds(500));
  ASSERT_OK(lock.Release());
  assert_string_equal(waiter.ReadLine().c_str(), "acquired");
  assert_int_equal(waiter.Wait(), 0);
}

void ExpiredRowsAreTakenOver(void** state) {
  const Db& db = PhpDbUnderTest(state);
  const std::string options = "db_table=" + Table();
  auto store = NewStore(db, options);
  const std::string r = UniqueResource("expired");
  {
    // PHP's lease of 1 s runs out while it still "holds" without renewing:
    // ipclock takes the row over, and PHP's late release leaves it alone.
    PhpHolder php(db, options, r, /*ttl=*/1);
    Lock lock = MakeLock(store, r);
    assert_false(Try(lock));
    absl::StatusOr<bool> got = lock.TryAcquireFor(absl::Seconds(10));
    ASSERT_OK(got);
    assert_true(*got);
    // PHP never released: its holder is reported dead.
    assert_true(lock.previous_owner_died());
    php.Release();
    ASSERT_OK(lock.CheckAcquired());
    ASSERT_OK(lock.Release());
  }
  // ipclock's lease of 1 s runs out unrenewed: PHP takes the row over, and
  // ipclock's release says the lock was lost.
  Lock lock = MakeLock(store, r, absl::Seconds(1));
  assert_true(Try(lock));
  assert_string_equal(PhpTry(db, options, r).c_str(), "busy");
  std::unique_ptr<PhpHolder> php;
  const double until = NowSeconds() + 10;
  while (php == nullptr && NowSeconds() < until) {
    if (PhpTry(db, options, r) == "acquired") php = std::make_unique<PhpHolder>(db, options, r);
    else absl::SleepFor(absl::Milliseconds(100));
  }
  if (php == nullptr) fail_msg("PHP never took over the expired row");
  ASSERT_CODE(lock.Release(), absl::StatusCode::kAborted);
  php->Release();
}

void TableAndColumnOptions(void** state) {
  const Db& db = PhpDbUnderTest(state);
  const std::string table = Table();
  const std::string options = absl::StrCat(
      "db_table=", table, "&db_id_col=lid&db_token_col=ltoken&db_expiration_col=lexp");
  auto store = NewStore(db, options);
  const std::string r = UniqueResource("cols");
  Lock lock = HeldOrFail(store, r);
  assert_string_equal(PhpTry(db, options, r).c_str(), "busy");
  assert_string_equal(
      db.query(absl::StrCat("SELECT COUNT(*) FROM ", table, " WHERE lexp > ", db.now_sql,
                            " AND LENGTH(ltoken) = 44 AND LENGTH(lid) = 64"))
          .c_str(),
      "1");
  ASSERT_OK(lock.Release());
  assert_string_equal(PhpTry(db, options, r).c_str(), "acquired");
  for (const char* bad : {"db_table=x;DROP", "db_table=1x", "db_table=a.b.c",
                          "db_id_col=a-b", "db_token_col=", "gc_probability=2",
                          "gc_probability=x"}) {
    absl::StatusOr<std::shared_ptr<Store>> s =
        ipclock::StoreFromDsn(WithOptions(db.dsn, bad));
    if (s.status().code() != absl::StatusCode::kInvalidArgument) {
      fail_msg("%s: %s", bad, s.status().ToString().c_str());
    }
  }
  absl::StatusOr<std::shared_ptr<Store>> long_name =
      ipclock::StoreFromDsn(WithOptions(db.dsn, "db_table=" + std::string(65, 't')));
  ASSERT_CODE(long_name, absl::StatusCode::kInvalidArgument);
}

// --- Collection and losses ------------------------------------------------------------

void ExpiredRowsAreCollected(void** state) {
  const Db& db = DbUnderTest(state);
  const std::string table = Table();
  auto always = NewStore(db, absl::StrCat("db_table=", table, "&gc_probability=1"));
  auto never = NewStore(db, absl::StrCat("db_table=", table, "&gc_probability=0"));
  Lock first = HeldOrFail(never, UniqueResource("gc"));  // creates the table
  // A row that expired two hours ago, and one that expired a moment ago,
  // whose holder's death its next holder has not been told of yet: the
  // collection leaves rows alone for an hour after their expiry.
  for (const char* row : {"('dead', 'tttttttttttttttttttttttttttttttttttttttttttt', ",
                          "('recent', 'tttttttttttttttttttttttttttttttttttttttttttt', "}) {
    db.query(absl::StrCat("INSERT INTO ", table, " (key_id, key_token, key_expiration) VALUES ",
                          row, db.now_sql, absl::StartsWith(row, "('dead'") ? " - 7200)" : " - 10)"));
  }
  Lock second = HeldOrFail(never, UniqueResource("gc"));
  assert_string_equal(
      db.query(absl::StrCat("SELECT COUNT(*) FROM ", table, " WHERE key_id = 'dead'")).c_str(),
      "1");
  Lock third = HeldOrFail(always, UniqueResource("gc"));
  assert_string_equal(
      db.query(absl::StrCat("SELECT COUNT(*) FROM ", table, " WHERE key_id = 'dead'")).c_str(),
      "0");
  assert_string_equal(
      db.query(absl::StrCat("SELECT COUNT(*) FROM ", table, " WHERE key_id = 'recent'")).c_str(),
      "1");
  // Held rows are not collected.
  assert_true(IsStillHeld(first));
  assert_true(IsStillHeld(second));
}

void LostRowIsReported(void** state) {
  const Db& db = DbUnderTest(state);
  const std::string table = Table();
  auto store = NewStore(db, "db_table=" + table);
  const std::string r = UniqueResource("lost");
  Lock lock = HeldOrFail(store, r);
  db.query(absl::StrCat("DELETE FROM ", table));
  absl::Status held = lock.CheckAcquired();
  ASSERT_CODE(held, absl::StatusCode::kAborted);
  print_message("%s\n", held.ToString().c_str());
  // Taken over after its lease ran out on the server: the release says so.
  assert_true(Try(lock));
  db.query(absl::StrCat("UPDATE ", table, " SET key_expiration = ", db.now_sql, " - 1"));
  Lock other = HeldOrFail(store, r);
  ASSERT_CODE(lock.Release(), absl::StatusCode::kAborted);
  assert_true(IsStillHeld(other));
  // The watch finds a deleted row at its next check.
  ipclock::LockWatch watch;
  ipclock::WatchedLock watched = WatchQuietly(watch, std::move(other), absl::Milliseconds(100));
  absl::SleepFor(absl::Milliseconds(400));
  assert_false(watched.lost());  // no false alarm while the row is there
  db.query(absl::StrCat("DELETE FROM ", table));
  assert_true(WaitLost(watched, 10));
  ASSERT_CODE(watched.Release(), absl::StatusCode::kAborted);
}

void RefreshAndRenewal(void** state) {
  const Db& db = DbUnderTest(state);
  const std::string table = Table();
  auto store = NewStore(db, "db_table=" + table);
  Lock lock = MakeLock(store, UniqueResource("refresh"), absl::Seconds(2));
  assert_true(Try(lock));
  ASSERT_OK(lock.Refresh(absl::Seconds(60)));
  const int64_t left = Number(
      db.query(absl::StrCat("SELECT key_expiration - ", db.now_sql, " FROM ", table)));
  if (left < 60 || left > 61) fail_msg("refreshed row expires in %lld s", static_cast<long long>(left));
  // The watch renews a 3 s lease every second: held well past 3 s.
  ipclock::LockWatch watch;
  Lock renewed = MakeLock(store, UniqueResource("renew"), absl::Seconds(3));
  assert_true(Try(renewed));
  ipclock::WatchedLock watched = WatchQuietly(watch, std::move(renewed));
  absl::SleepFor(absl::Seconds(5));
  assert_false(watched.lost());
  ASSERT_OK(watched.CheckNow());
  ASSERT_OK(watched.Release());
}

void HandedToAnotherProcess(void** state) {
  const Db& db = DbUnderTest(state);
  const std::string options = "db_table=" + Table();
  auto store = NewStore(db, options);
  const std::string r = UniqueResource("handover");
  Lock lock = HeldOrFail(store, r);
  absl::StatusOr<std::string> text = lock.Serialize();
  ASSERT_OK(text);
  lock.Abandon();
  const std::string dsn = WithOptions(db.dsn, options);
  pid_t child = ForkChild([&] {
    absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(dsn);
    if (!s.ok()) return 2;
    absl::StatusOr<Lock> taken = Lock::FromSerialized(*s, *text);
    if (!taken.ok() || !taken->is_acquired()) return 3;
    absl::StatusOr<Lock> rival = Lock::Create(*s, r);
    if (!rival.ok() || rival->TryAcquire().value_or(true)) return 4;
    return taken->Release().ok() ? 0 : 5;
  });
  assert_int_equal(WaitChild(child), 0);
  Lock after = HeldOrFail(store, r);
}

// --- DSNs ---------------------------------------------------------------------------------

void PdoFormIsTheSameStore(void** state) {
  const Db& db = DbUnderTest(state);
  const std::string options = "db_table=" + Table();
  auto url = NewStore(db, options);
  absl::StatusOr<std::shared_ptr<Store>> pdo =
      ipclock::StoreFromDsn(WithOptions(db.pdo_form, options));
  ASSERT_OK(pdo);
  assert_string_equal((*pdo)->name().data(), db.name);
  assert_false(absl::StrContains((*pdo)->Describe(), db.password.empty() ? "\x01" : db.password));
  const std::string r = UniqueResource("pdo-form");
  Lock a = MakeLock(url, r);
  Lock b = MakeLock(*pdo, r);
  assert_true(Try(a));
  assert_false(Try(b));
  ASSERT_OK(a.Release());
  assert_true(Try(b));
}

void ListShowsTheRows(void** state) {
  const Db& db = DbUnderTest(state);
  const std::string options = "db_table=" + Table();
  const std::string dsn = WithOptions(db.dsn, options);
  // Nothing locked yet, not even the table: an empty list.
  absl::StatusOr<ipclock::HeldLocks> none = ipclock::ListHeldLocks(dsn);
  ASSERT_OK(none);
  assert_int_equal(none->locks.size(), 0);
  auto store = NewStore(db, options);
  const std::string r = UniqueResource("list");
  Lock a = MakeLock(store, r);
  Lock b = MakeLock(store, UniqueResource("list"));
  assert_true(Try(a));
  assert_true(Try(b));
  absl::StatusOr<ipclock::HeldLocks> all = ipclock::ListHeldLocks(dsn);
  ASSERT_OK(all);
  assert_int_equal(all->locks.size(), 2);
  OneListedLock(dsn, r);
}

// --- SQLite ---------------------------------------------------------------------------------

void SqliteFileSpecifics(void**) {
  if (!IPCLOCK_HAVE_SQLITE) skip();
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/wal.db";
  absl::StatusOr<std::shared_ptr<Store>> store =
      ipclock::StoreFromDsn(absl::StrCat("sqlite://", path, "?busy_timeout=0.3"));
  ASSERT_OK(store);
  RawQuery raw = LiteQuery(path);
  assert_string_equal(raw("PRAGMA journal_mode").c_str(), "wal");
  const std::string r = UniqueResource("lite");
  Lock lock = HeldOrFail(*store, r);
  ASSERT_OK(lock.Release());
  // Another process writing for longer than busy_timeout: Unavailable,
  // saying so, not contention.
  raw("BEGIN IMMEDIATE");
  absl::StatusOr<bool> busy = lock.TryAcquire();
  ASSERT_CODE(busy, absl::StatusCode::kUnavailable);
  assert_true(absl::StrContains(busy.status().message(), "busy_timeout"));
  raw("COMMIT");
  assert_true(Try(lock));
  // Doctrine's absolute form (four slashes) and PDO's name the same file.
  for (const std::string& other : {absl::StrCat("sqlite:///", path),
                                   absl::StrCat("sqlite3://", path),
                                   absl::StrCat("sqlite:", path)}) {
    absl::StatusOr<std::shared_ptr<Store>> same = ipclock::StoreFromDsn(other);
    ASSERT_OK(same);
    Lock rival = MakeLock(*same, r);
    if (Try(rival)) fail_msg("%s is not the same database", other.c_str());
  }
  // Listing a database that does not exist lists nothing and creates nothing.
  absl::StatusOr<ipclock::HeldLocks> none =
      ipclock::ListHeldLocks(absl::StrCat("sqlite://", dir, "/absent.db"));
  ASSERT_OK(none);
  assert_int_equal(none->locks.size(), 0);
  assert_false(FileExists(dir + "/absent.db"));
  for (const char* bad : {"sqlite://relative.db", "sqlite:relative.db", "sqlite::memory:",
                          "sqlite:///:memory:", "sqlite://host/tmp/x.db",
                          "sqlite:///tmp/x.db?busy_timeout=-1", "sqlite:///tmp/x.db?nfs=1"}) {
    absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(bad);
    if (s.status().code() != absl::StatusCode::kInvalidArgument) {
      fail_msg("%s: %s", bad, s.status().ToString().c_str());
    }
  }
  // A dir that does not exist: the OS error, naming the path.
  absl::StatusOr<std::shared_ptr<Store>> missing =
      ipclock::StoreFromDsn(absl::StrCat("sqlite://", dir, "/no/such/dir.db"));
  assert_false(missing.ok());
  assert_true(absl::StrContains(missing.status().message(), "/no/such/dir.db"));
}

// Whether this build has the store named `name`.
bool Built(absl::string_view name) {
  for (const ipclock::StoreInfo& info : ipclock::KnownStores()) {
    if (info.name == name) return info.built;
  }
  return false;
}

// The database file deleted or renamed away under a held lock: the lock is
// in a file nobody else sees. A check says so, and the watch hears of it
// from inotify without waiting for its interval.
#if IPCLOCK_HAVE_SQLITE
std::atomic<int> g_steps{0};
std::atomic<decltype(ipclock::SqliteCalls::sqlite3_step)::Function> g_real_step{nullptr};
int CountingStep(sqlite3_stmt* statement) {
  ++g_steps;
  return g_real_step.load()(statement);
}
#endif

// A contended wait asks once, then sleeps a first step (10 ms, less a
// quarter at most): a wait of 3 ms runs the statements of two tries, the
// Lock's and the look at the deadline (three if it asked again at once).
void ContendedWaitAsksOnceThenSleeps(void**) {
#if !IPCLOCK_HAVE_SQLITE
  skip();
#else
  const std::string dsn = absl::StrCat("sqlite://", MakeTempDir(), "/tries.db");
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  ASSERT_OK(store);
  const std::string r = UniqueResource("tries");
  Lock holder = MakeLock(*store, r), waiter = MakeLock(*store, r);
  assert_true(Try(holder));
  assert_false(Try(waiter));  // warm: the statements are prepared
  g_real_step = ipclock::Sqlite().sqlite3_step.get();
  ipclock::Sqlite().sqlite3_step.Replace(&CountingStep);
  assert_false(Try(waiter));
  const int per_try = g_steps.exchange(0);
  absl::StatusOr<bool> waited = waiter.TryAcquireFor(absl::Milliseconds(3));
  ipclock::Sqlite().sqlite3_step.Replace(g_real_step.load());
  ASSERT_OK(waited.status());
  assert_false(*waited);
  assert_true(per_try > 0);
  assert_int_equal(g_steps.load(), 2 * per_try);
#endif
}

void SqliteFileRemovedUnderAHolder(void**) {
  if (!IPCLOCK_HAVE_SQLITE) skip();
  const std::string dir = MakeTempDir();
  const std::string dsn = absl::StrCat("sqlite://", dir, "/gone.db");
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  ASSERT_OK(store);
  const std::string r = UniqueResource("gone");
  Lock checked = HeldOrFail(*store, r);
  assert_int_equal(unlink((dir + "/gone.db").c_str()), 0);
  ASSERT_CODE(checked.CheckAcquired(), absl::StatusCode::kAborted);
  // A newcomer gets the lock in the new file; so does the same store.
  absl::StatusOr<std::shared_ptr<Store>> other = ipclock::StoreFromDsn(dsn);
  ASSERT_OK(other);
  Lock newcomer = HeldOrFail(*other, r);
  ASSERT_OK(newcomer.Release());

  Lock watched_lock = HeldOrFail(*store, r);
  ipclock::LockWatch watch;
  ipclock::WatchedLock watched = WatchQuietly(watch, std::move(watched_lock), absl::Hours(1));
  absl::SleepFor(absl::Milliseconds(200));
  assert_false(watched.lost());
  assert_int_equal(rename((dir + "/gone.db").c_str(), (dir + "/moved.db").c_str()), 0);
  assert_true(WaitLost(watched, 10));
}

void BadServerDsns(void**) {
  const char* secret = "s3cret-pw";
  for (const std::string& dsn : std::vector<std::string>{
           "pgsql:host=127.0.0.1;password=s3cret-pw",
           "pgsql:host=127.0.0.1;colour=blue?password=s3cret-pw",
           "pgsql:dbname=x?password=s3cret-pw",
           "postgresql://u@127.0.0.1/x?password=s3cret-pw",
           "postgresql://u:s3cret-pw@127.0.0.1/a/b",
           "mysql:host=127.0.0.1;password=s3cret-pw",
           "mysql:host=127.0.0.1;charset=latin1?password=s3cret-pw",
           "mysql:dbname=x?password=s3cret-pw",
           "mysql:host=127.0.0.1;nonsense?password=s3cret-pw",
           "mysql://u@127.0.0.1/x?password=s3cret-pw",
           "mysql2://u:s3cret-pw@127.0.0.1/x?unix_socket=relative",
       }) {
    absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
    const bool built = Built(absl::StartsWith(dsn, "p") ? "postgresql" : "mysql");
    const absl::StatusCode expected =
        built ? absl::StatusCode::kInvalidArgument : absl::StatusCode::kUnimplemented;
    if (store.status().code() != expected) {
      fail_msg("%s: expected %s, got %s", dsn.c_str(),
               absl::StatusCodeToString(expected).c_str(), store.status().ToString().c_str());
    }
    if (absl::StrContains(store.status().message(), secret)) {
      fail_msg("%s: the message shows the password", dsn.c_str());
    }
  }
}

// The registry: Symfony's schemes name the table store, *+advisory the
// advisory locks.
void SchemesNameTheRightStore(void**) {
  std::vector<std::string> schemes = ipclock::SupportedDsnSchemes();
  for (const ipclock::StoreInfo& info : ipclock::KnownStores()) {
    auto has = [&](const char* s) {
      for (const std::string& x : info.schemes) {
        if (x == s) return true;
      }
      return false;
    };
    if (info.name == "postgresql") {
      assert_true(has("postgres") && has("pgsql") && !has("postgresql+advisory"));
      assert_string_equal(info.feature.c_str(), "postgres");
    } else if (info.name == "postgresql+advisory") {
      assert_true(has("pgsql+advisory") && has("postgres+advisory") && !has("postgresql"));
    } else if (info.name == "mysql") {
      assert_true(has("mysql2") && !has("mysql+advisory"));
      assert_string_equal(info.feature.c_str(), "mysql");
    } else if (info.name == "mysql+advisory") {
      assert_string_equal(info.feature.c_str(), "mysql");
    } else if (info.name == "sqlite") {
      assert_true(has("sqlite3"));
      assert_true(info.scope == ipclock::Scope::kLocal);
      assert_string_equal(info.feature.c_str(), "sqlite");
    }
  }
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  return RunPerDbGroup("table_store_test",
                       {
                           {"RowAsSymfonyWritesIt", RowAsSymfonyWritesIt},
                           {"PhpHoldsIpclockWaits", PhpHoldsIpclockWaits},
                           {"IpclockHoldsPhpWaits", IpclockHoldsPhpWaits},
                           {"ExpiredRowsAreTakenOver", ExpiredRowsAreTakenOver},
                           {"TableAndColumnOptions", TableAndColumnOptions},
                           {"ExpiredRowsAreCollected", ExpiredRowsAreCollected},
                           {"LostRowIsReported", LostRowIsReported},
                           {"RefreshAndRenewal", RefreshAndRenewal},
                           {"HandedToAnotherProcess", HandedToAnotherProcess},
                           {"PdoFormIsTheSameStore", PdoFormIsTheSameStore},
                           {"ListShowsTheRows", ListShowsTheRows},
                       },
                       {
                           cmocka_unit_test(SqliteFileSpecifics),
                           cmocka_unit_test(SqliteFileRemovedUnderAHolder),
                           cmocka_unit_test(ContendedWaitAsksOnceThenSleeps),
                           cmocka_unit_test(BadServerDsns),
                           cmocka_unit_test(SchemesNameTheRightStore),
                       });
}
