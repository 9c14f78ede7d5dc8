// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The etcd store against the members of tools/test-servers/etcd.sh
// ($IPCLOCK_TEST_ETCD, $IPCLOCK_TEST_ETCDS) and members it starts itself
// ($IPCLOCK_TEST_PORT_BASE+90.., to freeze with SIGSTOP), with etcd's own
// `etcdctl lock` as the other client: exclusion both ways, one FIFO queue
// for waiters of both, `etcdctl lock`'s environment from `ipclock run`, a
// killed holder's lock going with its lease and the next holder told, a
// waiter that gets SIGTERM leaving the queue before it dies, losses (a
// revoked lease, a deleted key) reported by the watch at once, an
// unreachable member reported Unavailable and then, once the lease may
// have expired, Aborted; the layout, the DSN, TLS refusals, shared locks
// beside etcdctl, `ipclock list`, fork.
//
// Skipped without the members (failed under CI=true). The tests with a
// member of the suite's own, TLS, shared locks, listing and fork are in
// etcd_store_test_members.cc, for length.

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
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "ipclock/stores/etcd_store.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store_factory.h"
#include "own_server.h"
#include "scripted_server.h"
#include "peer_process.h"
#include "spawn_util.h"
#include "stores/etcd/etcd_json.h"
#include "stores/etcd/etcd_names.h"
#include "etcd_store_test.h"
#include "listed_locks.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

std::string Endpoint() {
  return absl::StrCat("127.0.0.1:", DsnPort(EnvOrNull("IPCLOCK_TEST_ETCD")));
}

std::string Dsn(const std::string& query) {
  return absl::StrCat(EnvOrNull("IPCLOCK_TEST_ETCD"), "/etcd-test", query.empty() ? "" : "?",
                      query);
}

std::string EtcdctlName(const std::string& r) { return absl::StrCat("etcd-test/", r); }

std::string Etcdctl() {
  std::string path = FindInPath("etcdctl");
  if (path.empty()) fail_msg("no etcdctl (apt-get install etcd-client)");
  return path;
}

std::string Ctl(const std::vector<std::string>& args, int* code) {
  std::vector<std::string> argv = {Etcdctl(), "--endpoints", Endpoint()};
  argv.insert(argv.end(), args.begin(), args.end());
  int ignored = 0;
  return RunForOutput(argv, code != nullptr ? code : &ignored);
}

pid_t Started(pid_t pid) {
  RegisterOwnServer(pid);
  return pid;
}

int Reap(pid_t pid, double timeout_sec) {
  const int code = WaitPlain(pid, timeout_sec);
  ForgetOwnServer(pid);
  return code;
}

pid_t CtlLock(const std::string& name, const std::string& script) {
  return Started(
      Spawn({Etcdctl(), "--endpoints", Endpoint(), "lock", name, "--", "sh", "-c", script}));
}

std::string HoldUntilGo(const std::string& dir, const std::string& mark) {
  return absl::StrCat("touch ", dir, "/", mark, "; while [ ! -e ", dir, "/go ] && [ -d ", dir,
                      " ]; do sleep 0.05; done");
}

std::vector<std::string> KeysUnder(const std::string& prefix) {
  std::vector<std::string> keys;
  for (absl::string_view l :
       absl::StrSplit(Ctl({"get", "--prefix", "--keys-only", prefix}), '\n', absl::SkipEmpty())) {
    keys.emplace_back(l);
  }
  return keys;
}

void AwaitQueueLength(const std::string& r, size_t n) {
  const double t0 = NowSeconds();
  while (KeysUnder(EtcdctlName(r) + "/").size() != n) {
    if (NowSeconds() - t0 > 20) {
      fail_msg("the queue of %s never held %zu keys (it holds %zu)", r.c_str(), n,
               KeysUnder(EtcdctlName(r) + "/").size());
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

std::vector<std::string> Run(const std::string& dsn, const std::string& r,
                             const std::vector<std::string>& command) {
  std::vector<std::string> argv = {IpclockPath(), "run", "--store", dsn, "--key", r, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// Kills the command whose pid `ipclock run` had it write to `pid_file`
// (what a SIGKILL of a whole service would also take down), once written.
void KillCommandOf(const std::string& pid_file) {
  int pid = 0;
  for (double t0 = NowSeconds(); pid <= 0 && NowSeconds() - t0 < 10;) {
    (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFileOrEmpty(pid_file)), &pid);
    if (pid <= 0) absl::SleepFor(absl::Milliseconds(10));
  }
  if (pid > 0) kill(pid, SIGKILL);
}

pid_t StartSleepingHolder(const std::string& dsn, const std::string& r,
                          const std::string& pid_file) {
  SpawnOptions group;
  group.new_process_group = true;
  const pid_t run = Started(Spawn(
      Run(dsn, r, {"sh", "-c", absl::StrCat("echo $$ > ", pid_file, "; exec sleep 60")}), group));
  assert_true(WaitForFile(pid_file, 20));
  return run;
}

void KillSleepingHolder(pid_t run, const std::string& pid_file) {
  kill(-run, SIGKILL);
  assert_int_equal(Reap(run, 10), 128 + SIGKILL);
  KillCommandOf(pid_file);
}

namespace {

using ipclock::Lock;
using ipclock::Store;

// --- Without a server -----------------------------------------------------------------

void LayoutAndJson(void**) {
  using ipclock::DecodeEtcdResource;
  using ipclock::EncodeEtcdResource;
  assert_string_equal(EncodeEtcdResource("job").c_str(), "job");
  assert_string_equal(EncodeEtcdResource("a/b%c").c_str(), "a%2Fb%25c");
  for (const std::string& r : {std::string("x"), std::string("a/b%2F"), std::string("\0\xff/", 3),
                               std::string(1024, '/')}) {
    std::optional<std::string> back = DecodeEtcdResource(EncodeEtcdResource(r));
    assert_true(back.has_value() && *back == r);
  }
  assert_false(DecodeEtcdResource("a/b").has_value());
  assert_false(DecodeEtcdResource("%41").has_value());
  // Go's %x of the lease ID, as concurrency.Mutex names its key.
  assert_string_equal(ipclock::LeaseHex(4183740791007046926).c_str(), "3a0fa21540496d0e");
  const ipclock::EtcdLockKeys k = ipclock::KeysOf("locks", "job");
  assert_string_equal(k.record.c_str(), "locks/job");
  assert_string_equal(k.MutexKey(0x694d).c_str(), "locks/job/694d");
  assert_string_equal(k.queue_end.c_str(), "locks/job0");
  assert_true(k.IsReader("locks/job/read/1"));
  assert_false(k.IsReader("locks/job/694d"));
  assert_string_equal(ipclock::KeysOf("", "job").record.c_str(), "job");
  assert_string_equal(ipclock::EtcdPrefixEnd("a\xff\xff").c_str(), "b");
  std::optional<ipclock::EtcdKeyName> name = ipclock::ParseEtcdKey("locks", "locks/a%2Fb/read/9");
  assert_true(name && name->resource == "a/b" && name->reader && name->lock_name == "read/9");
  assert_false(ipclock::ParseEtcdKey("locks", "lockz/a/1").has_value());

  // The gateway's JSON, and what a hostile server might send instead.
  absl::StatusOr<ipclock::JsonValue> v = ipclock::JsonValue::Parse(
      R"({"header":{"revision":"42"},"kvs":[{"key":"YQ==","n":-1.5e3}],"ok":true,)"
      R"("s":"\u00e9\ud83d\ude00\n","null":null})");
  ASSERT_OK(v);
  assert_int_equal(v->Find("header")->IntOf("revision"), 42);
  assert_int_equal(v->IntOf("missing", 7), 7);
  assert_true(v->BoolOf("ok"));
  assert_string_equal(v->StringOf("s").c_str(), "\xc3\xa9\xf0\x9f\x98\x80\n");
  assert_string_equal(v->Find("kvs")->items()[0].Find("n")->text().c_str(), "-1.5e3");
  for (const char* bad : {"", "{", "{\"a\":}", "[1,]", "\"\\ud800\"", "\"\x01\"", "01", "{} x",
                          "nul", "\"\\q\""}) {
    ASSERT_CODE(ipclock::JsonValue::Parse(bad), absl::StatusCode::kInvalidArgument);
  }
  ASSERT_CODE(ipclock::JsonValue::Parse(std::string(100, '[') + std::string(100, ']')),
              absl::StatusCode::kInvalidArgument);
}

// --- DSNs ----------------------------------------------------------------------------------

void DsnFormsAndBadInput(void**) {
  REQUIRE_SERVER();
  const std::string ep = Endpoint();
  // Two members (the same one twice), the root as prefix, the defaults.
  for (const std::string& dsn :
       {absl::StrCat("etcd://", ep, ",", ep, "/etcd-test/deeper?ttl=5&timeout=2&connect_timeout=1"),
        absl::StrCat("etcd://", ep, "/"), absl::StrCat("etcd://", ep)}) {
    auto store = OpenStoreOrFail(dsn);
    assert_string_equal(std::string(store->name()).c_str(), "etcd");
    const std::string r = UniqueResource("dsn");
    Lock lock = HeldOrFail(store, r);
    std::optional<ipclock::EtcdHeldKey> held = ipclock::EtcdHeldKeyOf(lock);
    assert_true(held.has_value());
    const std::string want = absl::EndsWith(dsn, "/")  ? absl::StrCat(r, "/")
                             : absl::StrContains(dsn, "deeper") ? absl::StrCat("etcd-test/deeper/", r, "/")
                                                                : absl::StrCat("ipclock/", r, "/");
    if (!absl::StartsWith(held->key, want)) {
      fail_msg("%s: key %s, expected it under %s", dsn.c_str(), held->key.c_str(), want.c_str());
    }
    assert_int_equal(static_cast<int64_t>(*lock.fence()), held->revision);
    ASSERT_OK(lock.Release());
  }
  for (const std::string& dsn :
       {absl::StrCat("etcd://user:pw@", ep), absl::StrCat("etcd://", ep, "?ttl=0"),
        absl::StrCat("etcd://", ep, "?ttl=1.5"), absl::StrCat("etcd://", ep, "?timeout=0"),
        absl::StrCat("etcd://", ep, "?bogus=1"), absl::StrCat("etcd://", ep, "?cacert=/etc/hosts"),
        absl::StrCat("etcds://", ep, "?cert=/a"), std::string("etcd://h1:1,,h2:2"),
        std::string("etcd://h1:x,h2:2"), std::string("etcd:"), std::string("etcd://"),
        std::string("etcd://[::1]:1,[::1]:2"),
        absl::StrCat("etcds://", ep, "?cacert=/nonexistent/ca.pem")}) {
    absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
    if (store.ok() || (store.status().code() != absl::StatusCode::kInvalidArgument &&
                       store.status().code() != absl::StatusCode::kNotFound)) {
      fail_msg("%s: expected InvalidArgument (or NotFound for a missing file), got %s",
               dsn.c_str(), store.status().ToString().c_str());
    }
  }
  // Plain HTTP to the TLS member: a configuration error, at once.
  if (const char* tls = EnvOrNull("IPCLOCK_TEST_ETCDS")) {
    absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(
        absl::StrCat("etcd://127.0.0.1:", DsnPort(tls)));
    ASSERT_CODE(store, absl::StatusCode::kInvalidArgument);
    assert_true(absl::StrContains(store.status().message(), "etcds://"));
  }
  // Nothing listens: Unavailable within the timeouts, naming the member.
  assert_true(ExpectUnreachable("etcd://127.0.0.1", "?connect_timeout=0.5&timeout=0.5") < 5);
}

// --- etcdctl lock, both ways -------------------------------------------------------------------

void ExcludesEtcdctlBothWays(void**) {
  REQUIRE_SERVER();
  auto store = OpenStoreOrFail(Dsn());
  const std::string r = UniqueResource("both");
  const std::string dir = MakeTempDir();

  // ipclock holds: `etcdctl lock` waits, and gets in once ipclock lets go.
  Lock lock = HeldOrFail(store, r);
  const std::optional<ipclock::EtcdHeldKey> ours = ipclock::EtcdHeldKeyOf(lock);
  assert_true(ours.has_value());
  assert_true(absl::StartsWith(ours->key, EtcdctlName(r) + "/"));
  pid_t peer = CtlLock(EtcdctlName(r), absl::StrCat("echo \"$ETCD_LOCK_KEY\" > ", dir, "/in"));
  AwaitQueueLength(r, 2);  // etcdctl's key queued behind ours
  absl::SleepFor(absl::Milliseconds(300));
  assert_false(FileExists(dir + "/in"));
  ASSERT_OK(lock.Release());
  assert_int_equal(Reap(peer, 20), 0);
  assert_true(FileExists(dir + "/in"));

  // etcdctl holds: ipclock is busy, waits, and gets in once etcdctl lets go.
  peer = CtlLock(EtcdctlName(r), HoldUntilGo(dir));
  assert_true(WaitForFile(dir + "/held", 20));
  assert_false(TryOrFail(lock));
  absl::StatusOr<bool> waited = lock.TryAcquireFor(absl::Milliseconds(300));
  ASSERT_OK(waited);
  assert_false(*waited);
  assert_true(WriteFile(dir + "/go", ""));
  ASSERT_OK(lock.Acquire(absl::Seconds(20)));
  assert_int_equal(Reap(peer, 20), 0);
  assert_false(lock.previous_owner_died());  // etcdctl released cleanly
  ASSERT_OK(lock.Release());
  assert_true(KeysUnder(EtcdctlName(r)).empty());
}

// Waiters of both clients queue in the order their keys were created.
void FifoWithWaitersFromBoth(void**) {
  REQUIRE_SERVER();
  const std::string dsn = Dsn();
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("fifo");
  const std::string order = MakeTempDir() + "/order";
  Lock holder = HeldOrFail(store, r);
  std::vector<pid_t> waiters;
  for (int i = 0; i < 4; ++i) {
    const std::string append = absl::StrCat("echo w", i, " >> ", order, "; sleep 0.1");
    waiters.push_back(i % 2 == 0 ? CtlLock(EtcdctlName(r), append)
                                 : Started(Spawn(Run(dsn, r, {"sh", "-c", append}))));
    AwaitQueueLength(r, static_cast<size_t>(i + 2));
  }
  ASSERT_OK(holder.Release());
  for (pid_t p : waiters) assert_int_equal(Reap(p, 30), 0);
  assert_string_equal(ReadFileOrEmpty(order).c_str(), "w0\nw1\nw2\nw3\n");
}

// A wait longer than the lease's TTL keeps its place: the waiter renews
// its lease, so its key stays queued ahead of a later waiter.
void WaiterOutlivesItsLease(void**) {
  REQUIRE_SERVER();
  const std::string dsn = Dsn("ttl=2");
  const std::string r = UniqueResource("longwait");
  const std::string dir = MakeTempDir();
  const std::string order = dir + "/order";
  pid_t holder = CtlLock(EtcdctlName(r), HoldUntilGo(dir));
  assert_true(WaitForFile(dir + "/held", 20));
  pid_t ours = Started(Spawn(Run(dsn, r, {"sh", "-c", absl::StrCat("echo ipclock >> ", order)})));
  AwaitQueueLength(r, 2);
  pid_t later = CtlLock(EtcdctlName(r), absl::StrCat("echo etcdctl >> ", order));
  AwaitQueueLength(r, 3);
  absl::SleepFor(absl::Milliseconds(3500));  // past the waiter's 2 s lease
  assert_int_equal(KeysUnder(EtcdctlName(r) + "/").size(), 3);
  assert_true(WriteFile(dir + "/go", ""));
  for (pid_t p : {holder, ours, later}) assert_int_equal(Reap(p, 30), 0);
  assert_string_equal(ReadFileOrEmpty(order).c_str(), "ipclock\netcdctl\n");
}

// `ipclock run` tells its command what `etcdctl lock` tells its own.
void RunExportsEtcdctlEnvironment(void**) {
  REQUIRE_SERVER();
  const std::string r = UniqueResource("env");
  int code = 0;
  std::string out = RunForOutput(
      Run(Dsn(), r, {"sh", "-c", "echo \"$ETCD_LOCK_KEY $ETCD_LOCK_REV $IPCLOCK_FENCE\""}), &code);
  assert_int_equal(code, 0);
  std::vector<std::string> parts = absl::StrSplit(out, ' ');
  assert_int_equal(parts.size(), 3);
  assert_true(absl::StartsWith(parts[0], EtcdctlName(r) + "/"));
  assert_string_equal(parts[1].c_str(), parts[2].c_str());
  int64_t rev = 0;
  assert_true(absl::SimpleAtoi(parts[1], &rev) && rev > 0);
  // The key's create revision, as etcd holds it (read while held).
  out = RunForOutput(Run(Dsn(), r, {Etcdctl(), "--endpoints", Endpoint(), "get", "-w", "fields",
                                    "--prefix", EtcdctlName(r) + "/"}),
                     &code);
  assert_int_equal(code, 0);
  assert_true(absl::StrContains(out, "\"CreateRevision\""));
}

// --- Deaths and losses ------------------------------------------------------------------

// A holder killed with SIGKILL: its lock goes when its lease does, and the
// waiter already queued is told the holder died; with nobody waiting, the
// record stays ("holder died" in the list) until the next holder is told.
void KilledHolderLockGoesWithItsLease(void**) {
  REQUIRE_SERVER();
  const std::string dsn = Dsn("ttl=2");
  const std::string r = UniqueResource("kill9");
  const std::string dir = MakeTempDir();
  const pid_t run = StartSleepingHolder(dsn, r, dir + "/held");
  auto store = OpenStoreOrFail(dsn);
  Lock next = LockOrFail(store, r);
  assert_false(TryOrFail(next));
  KillSleepingHolder(run, dir + "/held");
  const double t0 = NowSeconds();
  ASSERT_OK(next.Acquire(absl::Seconds(20)));
  const double took = NowSeconds() - t0;
  print_message("the killed holder's lock went after %.2f s (lease TTL 2 s)\n", took);
  assert_true(took < 8);
  assert_true(next.previous_owner_died());
  ASSERT_OK(next.Release());

  // Nobody waiting: the record stays, and the next `ipclock run` is told.
  KillSleepingHolder(StartSleepingHolder(dsn, r, dir + "/held2"), dir + "/held2");
  bool died_listed = false;
  for (double t1 = NowSeconds(); !died_listed && NowSeconds() - t1 < 10;) {
    std::vector<ipclock::HeldLock> held = ListedLocks(dsn, r);
    died_listed = held.size() == 1 && held[0].mode == "holder died";
    if (!died_listed) absl::SleepFor(absl::Milliseconds(100));
  }
  assert_true(died_listed);
  int code = 0;
  std::string out = RunForOutput(
      Run(dsn, r, {"sh", "-c", "echo \"died=$IPCLOCK_PREVIOUS_OWNER_DIED\""}), &code);
  assert_int_equal(code, 0);
  assert_string_equal(out.c_str(), "died=1");
  assert_int_equal(ListedLocks(dsn, r).size(), 0);
}

// Waits until `n` waiters are listed behind the holder of `r`.
void WaitForWaiters(const std::string& dsn, const std::string& r, int64_t n) {
  for (double t0 = NowSeconds(); NowSeconds() - t0 < 20;) {
    std::vector<ipclock::HeldLock> held = ListedLocks(dsn, r);
    if (held.size() == 1 && held[0].waiters == n) return;
    absl::SleepFor(absl::Milliseconds(50));
  }
  fail_msg("%lld waiters never listed on %s", static_cast<long long>(n), r.c_str());
}

// A holder killed while a waiter queued behind it was killed too: the
// dead waiter's key goes with its lease, maybe after the holder's, and is
// no holder in between (an etcdctl holder's key, gone with its lease still
// living, is: ExcludesEtcdctlBothWays). The next holder is told.
void DeathToldPastADeadWaiter(void**) {
  REQUIRE_SERVER();
  const std::string dsn = Dsn("ttl=2");
  const std::string r = UniqueResource("dead-waiter");
  const std::string dir = MakeTempDir();
  SpawnOptions group;
  group.new_process_group = true;
  for (int round = 0; round < 2; ++round) {
    // Round 0 kills the waiter first, round 1 the holder first: either
    // lease may end first.
    const std::string held = absl::StrCat(dir, "/held", round);
    const std::string told = absl::StrCat(dir, "/told", round);
    const pid_t holder = StartSleepingHolder(dsn, r, held);
    pid_t waiter = Started(Spawn(Run(dsn, r, {"true"}), group));
    WaitForWaiters(dsn, r, 1);
    pid_t next = Started(Spawn(
        Run(dsn, r, {"sh", "-c",
                     absl::StrCat("echo \"died=$IPCLOCK_PREVIOUS_OWNER_DIED\" > ", told)}),
        group));
    WaitForWaiters(dsn, r, 2);
    const pid_t first = round == 0 ? waiter : holder, second = round == 0 ? holder : waiter;
    kill(-first, SIGKILL);
    absl::SleepFor(absl::Milliseconds(100));
    kill(-second, SIGKILL);
    assert_int_equal(Reap(waiter, 10), 128 + SIGKILL);
    assert_int_equal(Reap(holder, 10), 128 + SIGKILL);
    KillCommandOf(held);
    assert_int_equal(Reap(next, 30), 0);
    const std::string said(absl::StripAsciiWhitespace(ReadFileOrEmpty(told)));
    print_message("round %d: the next holder was told %s\n", round, said.c_str());
    assert_string_equal(said.c_str(), "died=1");
  }
}

// The lease revoked (`etcdctl lease revoke`): every lock on it is lost, and
// the watch says so at once, not at its next check (an hour away).
void RevokedLeaseIsLossSeenAtOnce(void**) {
  REQUIRE_SERVER();
  auto store = OpenStoreOrFail(Dsn());
  const std::string a = UniqueResource("revoke-a"), b = UniqueResource("revoke-b");
  Lock la = HeldOrFail(store, a), lb = LockOrFail(store, b);
  assert_true(TryOrFail(lb));
  const ipclock::EtcdHeldKey ka = *ipclock::EtcdHeldKeyOf(la);
  assert_int_equal(ka.lease, ipclock::EtcdHeldKeyOf(lb)->lease);  // one lease per process
  struct Seen {
    std::atomic<int> count{0};
    std::atomic<double> when{0};
    std::string why;  // the first, written before `count` rises
  } seen;
  ipclock::LockWatch watch;
  ipclock::WatchOptions options;
  options.check_interval = absl::Hours(1);
  options.diagnostics = [&](const ipclock::Diagnostic& loss) {
    if (loss.kind != ipclock::DiagnosticKind::kLockLost) return;
    if (seen.count.load() == 0) seen.why = std::string(loss.status.message());
    seen.when = NowSeconds();
    ++seen.count;
  };
  absl::StatusOr<ipclock::WatchedLock> wa = watch.Watch(std::move(la), options);
  absl::StatusOr<ipclock::WatchedLock> wb = watch.Watch(std::move(lb), options);
  ASSERT_OK(wa);
  ASSERT_OK(wb);
  absl::SleepFor(absl::Milliseconds(300));
  assert_int_equal(seen.count.load(), 0);
  const double t0 = NowSeconds();
  Ctl({"lease", "revoke", ipclock::LeaseHex(ka.lease)});
  while (seen.count.load() < 2 && NowSeconds() - t0 < 10) absl::SleepFor(absl::Milliseconds(10));
  assert_int_equal(seen.count.load(), 2);
  print_message("both losses reported %.0f ms after the revocation: %s\n",
                (seen.when.load() - t0) * 1000, seen.why.c_str());
  assert_true(seen.when.load() - t0 < 5);
  assert_true(absl::StrContains(seen.why, "lease"));
  ASSERT_CODE(wa->Release(), absl::StatusCode::kAborted);
  ASSERT_CODE(wb->Release(), absl::StatusCode::kAborted);
  // The store grants itself another lease for what comes next.
  Lock again = HeldOrFail(store, a);
  assert_true(ipclock::EtcdHeldKeyOf(again)->lease != ka.lease);
}

// The key deleted under `ipclock run` (`etcdctl del`): the command is
// stopped and the run exits 79, naming what happened.
void DeletedKeyStopsRun(void**) {
  REQUIRE_SERVER();
  const std::string r = UniqueResource("del");
  const std::string dir = MakeTempDir();
  SpawnOptions spawn;
  spawn.stderr_path = dir + "/stderr";
  pid_t run = Started(Spawn({IpclockPath(), "run", "--check-interval", "3600", "--store", Dsn(),
                             "--key", r, "--", "sh", "-c",
                             absl::StrCat("echo \"$ETCD_LOCK_KEY\" > ", dir, "/key; sleep 60")},
                            spawn));
  assert_true(WaitForFile(dir + "/key", 20));
  absl::SleepFor(absl::Milliseconds(300));  // the watch is up
  const std::string key(absl::StripAsciiWhitespace(ReadFileOrEmpty(dir + "/key")));
  const double t0 = NowSeconds();
  Ctl({"del", key});
  assert_int_equal(Reap(run, 30), 79);
  print_message("ipclock run ended %.0f ms after the delete\n", (NowSeconds() - t0) * 1000);
  assert_true(NowSeconds() - t0 < 15);
  const std::string err = ReadFileOrEmpty(dir + "/stderr");
  print_message("%s", err.c_str());
  assert_true(absl::StrContains(err, "deleted by another client"));
}

// A waiter that gets SIGINT, SIGTERM or SIGHUP leaves the queue before it
// dies by the signal (128+N): its key is deleted and its lease revoked, so
// the waiter behind it gets the lock when the holder lets go, not when the
// killed waiter's lease would have ended (TTL 20 s; 60 s for SIGINT and
// SIGHUP, whose keys must be gone before the holder lets go).
void SignalledWaiterLeavesTheQueue(void**) {
  REQUIRE_SERVER();
  const std::string r = UniqueResource("sigwait");
  const std::string dir = MakeTempDir();
  pid_t holder = CtlLock(EtcdctlName(r), HoldUntilGo(dir));
  assert_true(WaitForFile(dir + "/held", 20));
  AwaitQueueLength(r, 1);
  for (int sig : {SIGINT, SIGHUP}) {
    pid_t waiter = Started(Spawn(Run(Dsn("ttl=60"), r, {"true"})));
    AwaitQueueLength(r, 2);
    kill(waiter, sig);
    assert_int_equal(Reap(waiter, 10), 128 + sig);
    AwaitQueueLength(r, 1);
  }
  const std::vector<std::string> before = KeysUnder(EtcdctlName(r) + "/");
  pid_t waiter = Started(Spawn(Run(Dsn("ttl=20"), r, {"true"})));
  AwaitQueueLength(r, 2);
  // concurrency.Mutex names a waiter's key after its lease.
  std::string lease;
  for (const std::string& k : KeysUnder(EtcdctlName(r) + "/")) {
    if (k != before[0]) lease = k.substr(k.rfind('/') + 1);
  }
  pid_t next = Started(Spawn(Run(Dsn("ttl=20"), r, {"touch", dir + "/next"})));
  AwaitQueueLength(r, 3);
  kill(waiter, SIGTERM);
  assert_int_equal(Reap(waiter, 10), 128 + SIGTERM);
  const double t0 = NowSeconds();
  assert_true(WriteFile(dir + "/go", ""));
  assert_true(WaitForFile(dir + "/next", 30));
  const double took = NowSeconds() - t0;
  print_message("the next waiter got the lock %.0f ms after the holder was told to let go "
                "(the killed waiter's lease: 20 s)\n", took * 1000);
  assert_true(took < 5);
  for (pid_t p : {holder, next}) assert_int_equal(Reap(p, 30), 0);
  assert_true(absl::StrContains(Ctl({"lease", "timetolive", lease}), "already expired"));
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(LayoutAndJson),
      cmocka_unit_test_teardown(DsnFormsAndBadInput, StopOwnServers),
      cmocka_unit_test_teardown(ExcludesEtcdctlBothWays, StopOwnServers),
      cmocka_unit_test_teardown(FifoWithWaitersFromBoth, StopOwnServers),
      cmocka_unit_test_teardown(FencesGrowAcrossClients, StopOwnServers),
      cmocka_unit_test_teardown(WaiterOutlivesItsLease, StopOwnServers),
      cmocka_unit_test_teardown(RunExportsEtcdctlEnvironment, StopOwnServers),
      cmocka_unit_test_teardown(KilledHolderLockGoesWithItsLease, StopOwnServers),
      cmocka_unit_test_teardown(DeathToldOnlyToTheNextHolder, StopOwnServers),
      cmocka_unit_test_teardown(DeathToldPastADeadWaiter, StopOwnServers),
      cmocka_unit_test_teardown(RevokedLeaseIsLossSeenAtOnce, StopOwnServers),
      cmocka_unit_test_teardown(RunLeavesNoLease, StopOwnServers),
      cmocka_unit_test_teardown(DeletedKeyStopsRun, StopOwnServers),
      cmocka_unit_test_teardown(SignalledWaiterLeavesTheQueue, StopOwnServers),
      cmocka_unit_test_teardown(UnreachableIsUnavailableThenLost, StopOwnServers),
      cmocka_unit_test_teardown(RenewalGivesUpWhenTheLeaseMayEnd, StopOwnServers),
      cmocka_unit_test_teardown(TlsRefusalsAreConfigurationErrors, StopOwnServers),
      cmocka_unit_test_teardown(SharedLocksBesideEtcdctl, StopOwnServers),
      cmocka_unit_test_teardown(ListShowsHolderWaitersAndLease, StopOwnServers),
      cmocka_unit_test_teardown(ForkedChildHasItsOwnLease, StopOwnServers),
  };
  return cmocka_run_group_tests_name("etcd_store", tests, nullptr, nullptr);
}
