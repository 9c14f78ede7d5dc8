// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The mysql+advisory store's tests of lost sessions (killed, ended by the
// server when idle, a restart), fork safety, listing, bad DSNs and connection
// failures, and `ipclock run` end to end, run by mysql_store_test.cc's
// table.

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
#include "listed_locks.h"

namespace ipclock_test {

using ipclock::Lock;
using ipclock::Store;
using Conn = MysqlConn;

// --- Lost sessions ------------------------------------------------------------------

SessionStore Sessions() {
  SessionStore s;
  s.dsn = Dsn();
  s.tag = "my";
  s.end_holder = [](const std::string& resource) { KillHolder(Connect().get(), resource); };
  s.freed_within = absl::Seconds(10);
  s.lost_says = "lock is lost";
  s.probe = [](Store& store, ipclock::Key& key) {
    return ipclock::StoreCalls::CheckHeld(store, key);
  };
  return s;
}

SessionSuite kSessionSuite = {"IPCLOCK_TEST_MYSQL", Sessions};

void WatchHearsTheKillAtOnce(void**) {
  REQUIRE_SERVER();
  auto store = NewStore();
  const std::string r = UniqueResource("my-watch");
  Lock lock = HeldOrFail(store, r);
  ipclock::LockWatch watch;
  // Only the socket can tell the watch in time: no interval check before
  // the test gives up.
  ipclock::WatchedLock watched = WatchQuietly(watch, std::move(lock), absl::Hours(1));
  absl::SleepFor(absl::Milliseconds(200));
  assert_false(watched.lost());  // a held lock raises no alarm
  Conn admin = Connect();
  KillHolder(admin.get(), r);
  assert_true(WaitLost(watched));
  ASSERT_CODE(watched.status(), absl::StatusCode::kAborted);
  ASSERT_CODE(watched.Release(), absl::StatusCode::kAborted);
  assert_true(OtherProcessGets(r, absl::Seconds(10)));
}

void ServerRestartLosesTheLock(void**) {
  REQUIRE_SERVER();
  const char* restart = getenv("IPCLOCK_TEST_MYSQL_RESTART");
  if (restart == nullptr || restart[0] == '\0') {
    print_message("skipped: IPCLOCK_TEST_MYSQL_RESTART is not set\n");
    skip();
  }
  auto store = NewStore();
  const std::string r1 = UniqueResource("my-restart-a");
  const std::string r2 = UniqueResource("my-restart-b");
  Lock watched_lock = LockOrFail(store, r1);
  Lock checked = LockOrFail(store, r2);
  assert_true(TryOrFail(watched_lock));
  assert_true(TryOrFail(checked));
  ipclock::LockWatch watch;
  ipclock::WatchedLock watched = WatchQuietly(watch, std::move(watched_lock), absl::Hours(1));
  assert_int_equal(WaitPlain(Spawn({restart}), 60), 0);
  assert_true(WaitLost(watched));
  ASSERT_CODE(checked.CheckAcquired(), absl::StatusCode::kAborted);
  // The same store works on the restarted server.
  assert_true(TryOrFail(checked));
  assert_false(OtherProcessGets(r2));
  assert_true(OtherProcessGets(r1, absl::Seconds(10)));
}

// A server ends a session that sends nothing for wait_timeout seconds; a
// lock holder sends nothing. The store's sessions take the DSN's
// wait_timeout (a year by default): set to 1 s here, the lock is lost.
void IdleSessionEndedByTheServer(void**) {
  REQUIRE_SERVER();
  auto store = NewStore("wait_timeout=1");
  const std::string r = UniqueResource("my-idle");
  Lock lock = HeldOrFail(store, r);
  absl::SleepFor(absl::Milliseconds(2500));
  ASSERT_CODE(lock.CheckAcquired(), absl::StatusCode::kAborted);
  // With the default, an idle holder keeps its lock.
  auto kept = NewStore();
  Lock lasting = HeldOrFail(kept, r);
  absl::SleepFor(absl::Milliseconds(2500));
  ASSERT_OK(lasting.CheckAcquired());
}

// --- Listing ------------------------------------------------------------------------

void ListShowsTheHolders(void**) {
  REQUIRE_SERVER();
  auto store = NewStore();
  const std::string short_name = UniqueResource("my-list");
  const std::string long_name = short_name + std::string(80, 'L');
  Lock a = LockOrFail(store, short_name);
  Lock b = LockOrFail(store, long_name);
  assert_true(TryOrFail(a));
  assert_true(TryOrFail(b));
  Conn admin = Connect();
  const std::string session =
      Query(admin.get(), absl::StrCat("SELECT IS_USED_LOCK(", Utf8(short_name), ")"));
  absl::StatusOr<ipclock::HeldLocks> all = ipclock::ListHeldLocks(Dsn());
  ASSERT_OK(all);
  bool found_short = false, found_long = false;
  for (const ipclock::HeldLock& h : all->locks) {
    if (h.object == short_name) {
      found_short = true;
      assert_string_equal(h.resource.c_str(), short_name.c_str());
      bool has_session = false;
      for (const auto& [k, v] : h.number_details) {
        if (k == "session") has_session = absl::StrCat(v) == session;
      }
      assert_true(has_session);
      assert_true(h.since.has_value());
    }
    if (h.object == ipclock::MysqlLockName(long_name)) {
      found_long = true;
      assert_true(h.resource.empty());  // only the hash is on the server
    }
  }
  assert_true(found_short);
  assert_true(found_long);
  OneListedLock(Dsn(), long_name);
  ASSERT_OK(b.Release());
  assert_int_equal(ListedLocks(Dsn(), long_name).size(), 0);

  // A server without the plugin (and with performance_schema off, as the
  // test server runs): no list, saying what to turn on, but one lock can
  // still be asked for by name.
  Query(admin.get(), "UNINSTALL SONAME 'metadata_lock_info'");
  absl::StatusOr<ipclock::HeldLocks> none = ipclock::ListHeldLocks(Dsn());
  ipclock::ListRequest request;
  request.resource = short_name;
  absl::StatusOr<ipclock::HeldLocks> asked = ipclock::ListHeldLocks(Dsn(), request);
  Query(admin.get(), "INSTALL SONAME 'metadata_lock_info'");
  ASSERT_CODE(none, absl::StatusCode::kFailedPrecondition);
  assert_true(absl::StrContains(none.status().message(), "metadata_lock_info"));
  ASSERT_OK(asked);
  assert_int_equal(asked->locks.size(), 1);
  assert_string_equal(asked->locks[0].resource.c_str(), short_name.c_str());
}

// --- DSNs and connection failures ---------------------------------------------------

void BadDsnsAreRefusedWithoutThePassword(void**) {
  const char* secret = "s3cret-pw";
  for (const std::string& dsn : std::vector<std::string>{
           "mysql+advisory:host=127.0.0.1",  // a PDO form: tables only
           "mysql+advisory://u:s3cret-pw@/db",
           "mysql+advisory://u:s3cret-pw@127.0.0.1/a/b",
           "mysql+advisory://u:s3cret-pw@db.example/x?unix_socket=/run/m.sock",
           "mysql+advisory://u:s3cret-pw@localhost/x?unix_socket=run/m.sock",
           "mysql+advisory://u:s3cret-pw@127.0.0.1/x?ssl_ca=/etc/ca.pem",
           "mysql+advisory://u:s3cret-pw@127.0.0.1/x?ssl_mode=sometimes",
           "mysql+advisory://u:s3cret-pw@127.0.0.1/x?scheme=native",
           "mysql+advisory://u:s3cret-pw@127.0.0.1/x?max_idle=-1",
           "mysql+advisory://u:s3cret-pw@127.0.0.1/x?wait_timeout=0",
           "mysql+advisory://u:s3cret-pw@127.0.0.1/x?wait_slice=0",
           "mysql+advisory://u:s3cret-pw@127.0.0.1/x?connect_timeout=x",
           "mysql+advisory://u:s3cret-pw@127.0.0.1/x?colour=blue",
           "mysql+advisory://u@127.0.0.1/x?password=s3cret-pw",
       }) {
    absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
    if (store.status().code() != absl::StatusCode::kInvalidArgument) {
      fail_msg("%s: expected InvalidArgument, got %s", dsn.c_str(),
               store.status().ToString().c_str());
    }
    if (absl::StrContains(store.status().message(), secret)) {
      fail_msg("%s: the message shows the password: %s", dsn.c_str(),
               store.status().ToString().c_str());
    }
  }
}

void ConnectionFailures(void**) {
  REQUIRE_SERVER();
  ipclock::Dsn dsn = Parsed();
  // Nothing listens on the last MariaDB port of the range.
  const char* base = getenv("IPCLOCK_TEST_PORT_BASE");
  const int down_port = (base != nullptr ? atoi(base) : 21300) + 29;
  absl::StatusOr<std::shared_ptr<Store>> down = ipclock::StoreFromDsn(
      absl::StrCat("mysql+advisory://u:pw@127.0.0.1:", down_port, "/x?connect_timeout=2"));
  ASSERT_CODE(down, absl::StatusCode::kUnavailable);
  assert_true(absl::StrContains(down.status().message(), absl::StrCat(down_port)));
  const std::string where = absl::StrCat(dsn.host(), ":", dsn.port());
  absl::StatusOr<std::shared_ptr<Store>> wrong = ipclock::StoreFromDsn(
      absl::StrCat("mysql+advisory://", dsn.user(), ":wrong-pw@", where, dsn.path()));
  ASSERT_CODE(wrong, absl::StatusCode::kPermissionDenied);
  assert_false(absl::StrContains(wrong.status().message(), "wrong-pw"));
  absl::StatusOr<std::shared_ptr<Store>> no_db = ipclock::StoreFromDsn(absl::StrCat(
      "mysql+advisory://", dsn.user(), ":", Password(), "@", where, "/no_such_db"));
  // A name the server can never accept: a configuration fault, not retried.
  ASSERT_CODE(no_db, absl::StatusCode::kInvalidArgument);
  assert_false(absl::StrContains(no_db.status().message(), Password()));
}

// TLS, when the test server has a certificate (IPCLOCK_TEST_MYSQL_CA):
// required, and verified against the right and a wrong CA; a server without
// TLS refuses ssl_mode=required. A session killed under a TLS connection is
// a lost lock like any other (and the write that finds it gone raises no
// SIGPIPE in the program).
void TlsConnections(void**) {
  REQUIRE_SERVER();
  const char* ca = getenv("IPCLOCK_TEST_MYSQL_CA");
  if (ca == nullptr || ca[0] == '\0') {
    // TLS required and not offered: a configuration fault, not retried.
    absl::StatusOr<std::shared_ptr<Store>> tls = ipclock::StoreFromDsn(Dsn("ssl_mode=required"));
    ASSERT_CODE(tls, absl::StatusCode::kInvalidArgument);
    assert_true(absl::StrContains(tls.status().message(), "TLS"));
    return;
  }
  const std::string verified = absl::StrCat("ssl_mode=verify_identity&ssl_ca=", ca);
  for (const std::string& options : {std::string("ssl_mode=required"), verified}) {
    auto store = NewStore(options);
    const std::string r = UniqueResource("my-tls");
    Lock lock = HeldOrFail(store, r);
    assert_false(OtherProcessGets(r));
    Conn admin = Connect();
    KillHolder(admin.get(), r);
    ASSERT_CODE(lock.CheckAcquired(), absl::StatusCode::kAborted);
    TakeAndRelease(lock);
  }
  // Another CA does not vouch for the server's certificate.
  const std::string dir = MakeTempDir();
  const std::string other_ca = dir + "/other.pem";
  assert_int_equal(
      WaitPlain(Spawn({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                       "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                       "/CN=127.0.0.1", "-keyout", dir + "/other.key", "-out", other_ca})),
      0);
  // A certificate that fails verification: a configuration fault, not
  // retried.
  absl::StatusOr<std::shared_ptr<Store>> wrong = ipclock::StoreFromDsn(
      Dsn(absl::StrCat("ssl_mode=verify_identity&ssl_ca=", other_ca)));
  ASSERT_CODE(wrong, absl::StatusCode::kInvalidArgument);
}

// The guard the store puts around the connector's writes under TLS: a
// write to a socket whose peer has gone fails with EPIPE instead of killing
// the program, and leaves no SIGPIPE pending behind.
void SigpipeIsKeptFromTheProgram(void**) {
  int fds[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  close(fds[1]);
  {
    ipclock::SigpipeBlock quiet;
    assert_int_equal(write(fds[0], "x", 1), -1);
    assert_int_equal(errno, EPIPE);
  }
  sigset_t pending;
  sigemptyset(&pending);
  assert_int_equal(sigpending(&pending), 0);
  assert_int_equal(sigismember(&pending, SIGPIPE), 0);
  close(fds[0]);
}

// --- The CLI --------------------------------------------------------------------------

void CliRunEndToEnd(void**) {
  REQUIRE_SERVER();
  const std::string cli = IpclockPath();
  if (cli.empty()) fail_msg("no ipclock binary (IPCLOCK_BUILD_ROOT?)");
  const std::string key = UniqueResource("my-cli");
  const std::string dir = MakeTempDir();
  pid_t holder = Spawn({cli, "run", "--store", Dsn(), "--key", key, "--", "sh", "-c",
                        absl::StrCat("touch ", dir, "/in; sleep 1.5")});
  assert_true(WaitForFile(dir + "/in"));
  // Busy: the conflict status, and the command does not run.
  assert_int_equal(WaitPlain(Spawn({cli, "run", "-n", "--store", Dsn(), "--key", key, "--",
                                    "touch", dir + "/second"})),
                   1);
  assert_false(FileExists(dir + "/second"));
  assert_false(OtherProcessGets(key));
  // A waiter gets it when the holder's command ends.
  assert_int_equal(WaitPlain(Spawn({cli, "run", "-w", "20", "--store", Dsn(), "--key", key,
                                    "--", "touch", dir + "/third"})),
                   0);
  assert_true(FileExists(dir + "/third"));
  assert_int_equal(WaitPlain(holder), 0);
  assert_true(OtherProcessGets(key));
}

}  // namespace ipclock_test
