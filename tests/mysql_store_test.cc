// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The mysql+advisory store against a real MariaDB server
// (tools/test-servers/mariadb.sh exports IPCLOCK_TEST_MYSQL): Laravel's
// lock names against the server's own evaluation of Laravel's expression,
// exclusion both ways with the SQL Laravel runs (tests/php/
// laravel_mysql_peer.php, in PHP over PDO) for names of 64, 65 and more
// characters and multibyte names, every timeout form on both sides, waits
// in server-side slices, a killed session, a server restart and an idle
// session ended by the server noticed as lost locks, fork safety, listing,
// bad DSNs and connection failures, and `ipclock run` end to end.
//
// Tests that need the server skip when IPCLOCK_TEST_MYSQL is unset, and
// fail instead under CI=true; the PHP tests skip without php-mysql.

#include <errmsg.h>
#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <mysql.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/dsn.h"
#include "core/lock_access.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/stores/mysql_store.h"
#include "ipclock/store_factory.h"
#include "ipclock/spi/store_interface.h"
#include "platform/sigpipe_block.h"
#include "mysql_fixture.h"
#include "session_store_cases.h"
#include "spawn_util.h"
#include "mysql_store_test.h"
#include "php_peer.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

// --- The server ------------------------------------------------------------------

const char* ServerDsn() { return EnvOrNull("IPCLOCK_TEST_MYSQL"); }

std::string Dsn(absl::string_view options) {
  std::string dsn = ServerDsn();
  if (options.empty()) return dsn;
  return absl::StrCat(dsn, dsn.find('?') == std::string::npos ? "?" : "&", options);
}

ipclock::Dsn Parsed() {
  absl::StatusOr<ipclock::Dsn> dsn = ipclock::Dsn::Parse(ServerDsn());
  ASSERT_OK(dsn);
  return *std::move(dsn);
}

std::string Password() { return Parsed().password(); }

std::shared_ptr<ipclock::Store> NewStore(absl::string_view options) {
  return OpenStoreOrFail(Dsn(options));
}

Conn Connect() {
  Conn conn = MysqlConnect(Parsed());
  if (mysql_errno(conn.get()) != 0) fail_msg("connect: %s", mysql_error(conn.get()));
  return conn;
}

std::string Query(MYSQL* conn, const std::string& sql) { return MysqlQuery(conn, sql); }

std::string Utf8(absl::string_view bytes) {
  return absl::StrCat("CONVERT(X'", absl::BytesToHexString(bytes), "' USING utf8mb4)");
}

std::string KillHolder(MYSQL* admin, const std::string& resource) {
  const std::string id =
      Query(admin, absl::StrCat("SELECT IS_USED_LOCK(", Utf8(ipclock::MysqlLockName(resource)), ")"));
  if (id == "NULL" || id.empty()) fail_msg("nobody holds %s", resource.c_str());
  Query(admin, absl::StrCat("KILL ", id));
  return id;
}

bool OtherProcessGets(const std::string& resource, absl::Duration wait) {
  return ForkedChildGets(Dsn(), resource, ipclock::LockMode::kExclusive, wait);
}

namespace {

using ipclock::Lock;
using ipclock::Store;

// Names of every shape Laravel's scheme treats apart: at and past 64
// characters, multibyte at and past 64 characters, and long multibyte.
std::vector<std::string> Names(absl::string_view tag) {
  const std::string u = UniqueResource(tag);  // ASCII, about 30 characters
  std::string e_acute, emoji, kanji;
  for (int i = 0; i < 65; ++i) e_acute += "\xc3\xa9";             // é
  for (int i = 0; i < 70; ++i) emoji += "\xf0\x9f\x94\x92";       // U+1F512
  for (int i = 0; i < 30; ++i) kanji += "\xe9\x8c\xa0";           // 錠
  auto to_chars = [](std::string s, size_t chars, absl::string_view fill) {
    // `s` padded with `fill` characters to exactly `chars` characters
    // (all of `s` is ASCII here).
    while (s.size() < chars) s += ".";
    std::string out = s.substr(0, chars - 10);
    for (int i = 0; i < 10; ++i) out += std::string(fill);
    return out;
  };
  return {
      u,
      to_chars(u, 64, "a"),                 // 64 characters: the name itself
      to_chars(u, 65, "a"),                 // 65: hashed
      to_chars(u, 200, "b"),                // long: hashed
      to_chars(u, 64, "\xc3\xa9"),          // 64 characters, 74 bytes
      to_chars(u, 65, "\xc3\xa9"),          // 65 characters: hashed
      u + e_acute,                          // about 95 characters, 160 bytes
      u + kanji,                            // 60 characters of 1 and 3 bytes
      to_chars(u, 64, "\xf0\x9f\x94\x92"),  // 64 characters, 94 bytes
      u + emoji,                            // 100 characters of 4 bytes: hashed
  };
}

// --- Names -------------------------------------------------------------------------

void LockNameVectors(void**) {
  assert_string_equal(ipclock::MysqlLockName("invoice-42").c_str(), "invoice-42");
  assert_string_equal(ipclock::MysqlLockName(std::string(64, 'a')).c_str(),
                      std::string(64, 'a').c_str());
  assert_string_equal(ipclock::MysqlLockName(std::string(65, 'a')).c_str(),
                      (std::string(24, 'a') + "11655326c708d70319be2610e8a57d9a5b959d3b").c_str());
  std::string e65;
  for (int i = 0; i < 65; ++i) e65 += "\xc3\xa9";
  std::string e24;
  for (int i = 0; i < 24; ++i) e24 += "\xc3\xa9";
  // Characters, not bytes: 65 two-byte characters keep 24 of them.
  assert_string_equal(ipclock::MysqlLockName(e65).c_str(),
                      (e24 + "eba39ac93eac304a5b2b94cece7cc9bdb23e5f23").c_str());
  std::string e64 = e65.substr(2);
  assert_string_equal(ipclock::MysqlLockName(e64).c_str(), e64.c_str());
  // A byte that is no character: the hashed form, U+FFFD for it and as
  // padding.
  std::string fffd24;
  for (int i = 0; i < 24; ++i) fffd24 += "\xef\xbf\xbd";
  assert_string_equal(ipclock::MysqlLockName("\xff").c_str(),
                      (fffd24 + "85e53271e14006f0265921d02d4d736cdc580b0b").c_str());
  // NUL: the server would cut the name there, so "a" and "a\0b" differ.
  const std::string with_nul("a\0b", 3);
  assert_true(ipclock::MysqlLockName(with_nul) != "a");
  assert_int_equal(ipclock::MysqlLockName(with_nul).size(), 1 + 3 + 1 + 21 * 3 + 40);
  // Symfony 8.2: the SHA-256 hex of the resource, whatever it holds (PHP's
  // hash('sha256', ...) gives the same).
  assert_string_equal(ipclock::MysqlSymfonyLockName("invoice-42").c_str(),
                      "3c304bc21c84147600a54c27b7bccab936b33065bc7ea051a1a9af00e3378ff3");
  assert_string_equal(ipclock::MysqlSymfonyLockName(with_nul).c_str(),
                      "59b271ae1bbcb1d31d41929817f4b16fb439eb4f31520b5ad1d5ce98920a7138");
}

void NamesMatchTheServer(void**) {
  REQUIRE_SERVER();
  Conn admin = Connect();
  std::vector<std::string> names = Names("srv");
  names.push_back(std::string(63, 'x'));
  names.push_back("tab\tand space ");
  for (const std::string& r : names) {
    const std::string k = Utf8(r);
    const std::string server = Query(
        admin.get(), absl::StrCat("SELECT HEX(CASE WHEN CHAR_LENGTH(", k, ") > 64 THEN CONCAT(",
                                  "SUBSTR(", k, ", 1, 24), SHA1(", k, ")) ELSE ", k, " END)"));
    const std::string ours = absl::AsciiStrToUpper(
        absl::BytesToHexString(ipclock::MysqlLockName(r)));
    if (server != ours) {
      fail_msg("resource %s: server %s, ipclock %s", absl::CHexEscape(r).c_str(),
               server.c_str(), ours.c_str());
    }
  }
}

// Symfony's names, against the server's own SHA2() of every shape of name.
void SymfonyNamesMatchTheServer(void**) {
  REQUIRE_SERVER();
  Conn admin = Connect();
  std::vector<std::string> names = Names("sym-srv");
  names.push_back(std::string("a\0b\xff", 4));
  for (const std::string& r : names) {
    const std::string server = Query(
        admin.get(), absl::StrCat("SELECT SHA2(X'", absl::BytesToHexString(r), "', 256)"));
    if (server != ipclock::MysqlSymfonyLockName(r)) {
      fail_msg("resource %s: server %s, ipclock %s", absl::CHexEscape(r).c_str(), server.c_str(),
               ipclock::MysqlSymfonyLockName(r).c_str());
    }
  }
}

void NameTooLongForMariaDbIsInvalidArgument(void**) {
  REQUIRE_SERVER();
  // 49 four-byte characters: at most 64 characters, so not hashed, and 196
  // bytes, over MariaDB's 192.
  std::string r;
  for (int i = 0; i < 49; ++i) r += "\xf0\x9f\x94\x92";
  auto store = NewStore();
  Lock lock = LockOrFail(store, r);
  absl::StatusOr<bool> got = lock.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
  assert_true(absl::StrContains(got.status().message(), "192 bytes"));
}

// --- Laravel's SQL as a peer ------------------------------------------------------

std::string PeerScript() { return PhpPeerScript("laravel_mysql_peer.php"); }

PhpPeerNeeds PeerNeeds() { return {PeerScript(), false, "pdo_mysql", "php-cli php-mysql"}; }

#define REQUIRE_PHP()                     \
  do {                                    \
    REQUIRE_SERVER();                     \
    REQUIRE_PHP_PEER(PeerNeeds(), false); \
  } while (0)

std::string PdoDsn() {
  ipclock::Dsn dsn = Parsed();
  setenv("PDO_USER", dsn.user().c_str(), 1);
  setenv("PDO_PASSWORD", dsn.password().c_str(), 1);
  return absl::StrCat("mysql:host=", dsn.host(), ";port=", dsn.port(),
                      ";dbname=", dsn.path().substr(1), ";charset=utf8mb4");
}

// Laravel's GET_LOCK with `timeout` as Laravel writes it: what it said
// ("acquired", "busy", "null") and how long the statement took.
std::string LaravelTry(const std::string& key, const std::string& timeout, double* took) {
  const std::string said = RunPhpPeer({"php", PeerScript(), PdoDsn(), key, "try", timeout});
  const size_t space = said.find(' ');
  if (space == std::string::npos || !absl::SimpleAtod(said.substr(space + 1), took)) {
    fail_msg("laravel peer said '%s'", said.c_str());
  }
  return said.substr(0, space);
}

// A Laravel application holding `key` until told to let go.
class LaravelHolder : public PhpPeerHolder {
 public:
  explicit LaravelHolder(const std::string& key)
      : PhpPeerHolder({"php", PeerScript(), PdoDsn(), key, "hold", "0"}) {}
  void Release() { PhpPeerHolder::Release({"released 1"}); }
};

void LaravelHoldsIpclockWaits(void**) {
  REQUIRE_PHP();
  auto store = NewStore();
  for (const std::string& key : Names("lv-holds")) {
    LaravelHolder php(key);
    Lock lock = LockOrFail(store, key);
    if (TryOrFail(lock)) fail_msg("got %s while Laravel held it", absl::CHexEscape(key).c_str());
    assert_false(OtherProcessGets(key));
    php.Release();
    assert_true(TryOrFail(lock));
  }
}

void IpclockHoldsLaravelWaits(void**) {
  REQUIRE_PHP();
  auto store = NewStore();
  for (const std::string& key : Names("ip-holds")) {
    Lock lock = HeldOrFail(store, key);
    double took = 0;
    const std::string said = LaravelTry(key, "0", &took);
    if (said != "busy") {
      fail_msg("Laravel said %s for %s held by ipclock", said.c_str(),
               absl::CHexEscape(key).c_str());
    }
    ASSERT_OK(lock.Release());
    assert_string_equal(LaravelTry(key, "0", &took).c_str(), "acquired");
  }
}

// Laravel's timeouts against a lock ipclock holds: 0 tries, a positive or
// fractional one waits that long on the server, a negative one (endless on
// MySQL) is refused by MariaDB (NULL), a very large one waits until the
// release.
void LaravelTimeoutForms(void**) {
  REQUIRE_PHP();
  auto store = NewStore();
  const std::string key = UniqueResource("lv-timeouts");
  Lock lock = HeldOrFail(store, key);
  double took = 0;
  assert_string_equal(LaravelTry(key, "0", &took).c_str(), "busy");
  assert_string_equal(LaravelTry(key, "1", &took).c_str(), "busy");
  if (took < 0.9) fail_msg("a 1 s GET_LOCK gave up after %.3f s", took);
  assert_string_equal(LaravelTry(key, "0.5", &took).c_str(), "busy");
  if (took < 0.45) fail_msg("a 0.5 s GET_LOCK gave up after %.3f s", took);
  assert_string_equal(LaravelTry(key, "-1", &took).c_str(), "null");
  // Waiting Laravel peers are let in when ipclock releases.
  for (const char* timeout : {"10", "31536000"}) {
    PeerProcess waiter({"php", PeerScript(), PdoDsn(), key, "try", timeout});
    absl::SleepFor(absl::Milliseconds(500));
    ASSERT_OK(lock.Release());
    const std::string said = waiter.ReadLine();
    assert_int_equal(waiter.Wait(), 0);
    if (!absl::StartsWith(said, "acquired ")) fail_msg("waiting peer said '%s'", said.c_str());
    assert_true(TryOrFail(lock));
  }
}

// --- Symfony 8.2's MysqlStore as a peer (scheme=symfony) -----------------------------

std::string SymfonyScript() { return PhpPeerScript("symfony_mysql_peer.php"); }

// Symfony's save() (`try`) or waitAndSave() (`wait`): what it said.
std::string SymfonyOnce(const std::string& resource, const std::string& mode) {
  return RunPhpPeer({"php", SymfonyScript(), PdoDsn(), resource, mode});
}

// A Symfony application holding `resource` until told to let go (LetGo(),
// safe from any thread); Finish() checks that it still held the lock,
// released it, and exited.
class SymfonyHolder : public PhpPeerHolder {
 public:
  explicit SymfonyHolder(const std::string& resource)
      : PhpPeerHolder({"php", SymfonyScript(), PdoDsn(), resource, "hold"}) {}
  void Finish() { PhpPeerHolder::Finish({"exists 1", "released 1"}); }
  void Release() {
    LetGo();
    Finish();
  }
};

void SymfonyHoldsIpclockWaits(void**) {
  REQUIRE_PHP();
  auto store = NewStore("scheme=symfony");
  auto laravel = NewStore();
  for (const std::string& key : Names("sf-holds")) {
    SymfonyHolder php(key);
    Lock lock = LockOrFail(store, key);
    if (TryOrFail(lock)) fail_msg("got %s while Symfony held it", absl::CHexEscape(key).c_str());
    // Laravel's name for the same resource is another lock: the schemes
    // never meet.
    Lock other = LockOrFail(laravel, key);
    TakeAndRelease(other);
    php.Release();
    TakeAndRelease(lock);
  }
  // An ipclock wait (server-side slices) ends with Symfony's release.
  const std::string key = UniqueResource("sf-wait");
  SymfonyHolder php(key);
  Lock lock = LockOrFail(NewStore("scheme=symfony&wait_slice=0.2"), key);
  std::thread let_go([&] {
    absl::SleepFor(absl::Milliseconds(500));
    php.LetGo();
  });
  const double t0 = NowSeconds();
  absl::Status waited = lock.Acquire(absl::Seconds(20));
  let_go.join();
  ASSERT_OK(waited);
  assert_true(NowSeconds() - t0 >= 0.4);
  php.Finish();
}

void IpclockHoldsSymfonyWaits(void**) {
  REQUIRE_PHP();
  auto store = NewStore("scheme=symfony");
  for (const std::string& key : Names("ip-sf-holds")) {
    Lock lock = HeldOrFail(store, key);
    const std::string said = SymfonyOnce(key, "try");
    if (said != "busy") {
      fail_msg("Symfony said %s for %s held by ipclock", said.c_str(),
               absl::CHexEscape(key).c_str());
    }
    ASSERT_OK(lock.Release());
    assert_string_equal(SymfonyOnce(key, "try").c_str(), "acquired");
  }
  // Symfony's blocking save is GET_LOCK(name, -1): MariaDB refuses it
  // (NULL), MySQL waits forever. Either way it never takes a held lock.
  const std::string key = UniqueResource("sf-blocking");
  Lock lock = HeldOrFail(store, key);
  const std::string said = SymfonyOnce(key, "wait");
  print_message("Symfony's blocking save on a held lock: %s\n", said.c_str());
  assert_string_equal(said.c_str(), "null");
  ASSERT_OK(lock.Release());
}

// `ipclock run` and `ipclock list` with scheme=symfony.
void SymfonySchemeFromTheCli(void**) {
  REQUIRE_PHP();
  const std::string dsn = Dsn("scheme=symfony");
  const std::string key = UniqueResource("sf-cli");
  SymfonyHolder php(key);
  int code = 0;
  RunForOutput({IpclockPath(), "run", "-n", "--store", dsn, "--key", key, "--", "true"}, &code);
  assert_int_equal(code, 1);
  const std::string out =
      RunForOutput({IpclockPath(), "list", "--json", "--store", dsn, "--key", key}, &code);
  assert_int_equal(code, 0);
  assert_true(absl::StrContains(out, ipclock::MysqlSymfonyLockName(key)));
  php.Release();
  RunForOutput({IpclockPath(), "run", "-n", "--store", dsn, "--key", key, "--", "true"}, &code);
  assert_int_equal(code, 0);
  RunForOutput({IpclockPath(), "run", "-n", "--store", Dsn("scheme=bogus"), "--key", key, "--",
                "true"},
               &code);
  assert_int_equal(code, 64);
}

// ipclock's waits while Laravel holds: a try, a timed wait that runs out,
// fractional and whole-second waits that end with the release, and an
// endless wait made of server-side slices (wait_slice=0.2 here), none with
// a negative timeout.
void IpclockTimeoutForms(void**) {
  REQUIRE_PHP();
  auto store = NewStore("wait_slice=0.2");
  const std::string key = UniqueResource("ip-timeouts");
  Lock lock = LockOrFail(store, key);
  {
    LaravelHolder php(key);
    assert_false(TryOrFail(lock));
    double t0 = NowSeconds();
    absl::StatusOr<bool> got = lock.TryAcquireFor(absl::Milliseconds(300));
    ASSERT_OK(got);
    assert_false(*got);
    if (NowSeconds() - t0 < 0.29) fail_msg("a 0.3 s wait ended after %.3f s", NowSeconds() - t0);
    ASSERT_CODE(lock.Acquire(absl::Milliseconds(750)), absl::StatusCode::kDeadlineExceeded);
    php.Release();
    TakeAndRelease(lock);
  }
  Conn admin = Connect();
  const std::string name_hex = absl::BytesToHexString(ipclock::MysqlLockName(key));
  for (absl::Duration timeout :
       {absl::Milliseconds(10500), absl::Seconds(20), absl::InfiniteDuration()}) {
    struct Shared {
      std::atomic<int> done{0};
    };
    Shared* shared = SharedMemory<Shared>();
    Signal go;
    Signal started;
    const std::string dsn = Dsn("wait_slice=0.2");
    // Forked before the PHP peer starts, so that it holds no copy of the
    // peer's stdin (the peer lets go when that pipe closes).
    pid_t child = ForkChild([&] {
      if (go.Wait(30) != 'x') return 2;
      absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(dsn);
      if (!s.ok()) return 2;
      absl::StatusOr<Lock> l = Lock::Create(*s, key);
      if (!l.ok()) return 2;
      started.Notify();
      absl::Status got = l->Acquire(timeout);
      shared->done = 1;
      return got.ok() ? 0 : 3;
    });
    auto php = std::make_unique<LaravelHolder>(key);
    go.Notify();
    assert_int_equal(started.Wait(), 'x');
    absl::SleepFor(absl::Milliseconds(900));  // several slices
    assert_int_equal(shared->done.load(), 0);
    // The wait is on the server, in slices of at most 0.2 s (caught
    // between two slices, the statement is looked at again).
    std::string info;
    for (int i = 0; i < 100 && info.empty(); ++i) {
      info = Query(admin.get(),
                   absl::StrCat("SELECT INFO FROM information_schema.PROCESSLIST WHERE INFO "
                                "LIKE 'SELECT GET_LOCK(%", name_hex, "%'"));
      if (info.empty()) absl::SleepFor(absl::Milliseconds(20));
    }
    if (!absl::StrContains(info, ", 0.200)") && !absl::StrContains(info, ", 0.1")) {
      fail_msg("the waiter's statement is '%s'", info.c_str());
    }
    php->Release();
    assert_int_equal(WaitChild(child), 0);
  }
}


}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(LockNameVectors),
      cmocka_unit_test(NamesMatchTheServer),
      cmocka_unit_test(NameTooLongForMariaDbIsInvalidArgument),
      cmocka_unit_test(SymfonyNamesMatchTheServer),
      cmocka_unit_test(LaravelHoldsIpclockWaits),
      cmocka_unit_test(IpclockHoldsLaravelWaits),
      cmocka_unit_test(LaravelTimeoutForms),
      cmocka_unit_test(IpclockTimeoutForms),
      cmocka_unit_test(SymfonyHoldsIpclockWaits),
      cmocka_unit_test(IpclockHoldsSymfonyWaits),
      cmocka_unit_test(SymfonySchemeFromTheCli),
      cmocka_unit_test_prestate(KilledSessionLosesTheLock, &kSessionSuite),
      cmocka_unit_test(WatchHearsTheKillAtOnce),
      cmocka_unit_test(IdleSessionEndedByTheServer),
      cmocka_unit_test_prestate(ForkedChildCannotUseParentsKey, &kSessionSuite),
      cmocka_unit_test(ListShowsTheHolders),
      cmocka_unit_test(BadDsnsAreRefusedWithoutThePassword),
      cmocka_unit_test(ConnectionFailures),
      cmocka_unit_test(TlsConnections),
      cmocka_unit_test(SigpipeIsKeptFromTheProgram),
      cmocka_unit_test(CliRunEndToEnd),
      // Last: it restarts the server under every other session.
      cmocka_unit_test(ServerRestartLosesTheLock),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
