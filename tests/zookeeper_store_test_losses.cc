// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The ZooKeeper store's tests of losses (a deleted node, an expired session,
// a disconnection shorter than the session, an unreachable ensemble), of
// processes (owner death, listing, multi-ops on an expired session, a forked
// child) and of the CLI end to end, run by zookeeper_store_test.cc's table.

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "core/lock_access.h"
#include "ipclock/admin/inspect.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"
#include "ipclock/store_factory.h"
#include "ipclock/stores/zookeeper_store.h"
#include "own_server.h"
#include "peer_process.h"
#include "scripted_server.h"
#include "spawn_util.h"
#include "stores/zookeeper/zookeeper_multi.h"
#include "stores/zookeeper/zookeeper_names.h"
#include "zookeeper_store_test.h"
#include "listed_locks.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

using ipclock::Lock;

// --- Losses ------------------------------------------------------------------------------------

void DeletedNodeIsLossSeenByTheWatch(void**) {
  REQUIRE_SERVER();
  for (const std::string& dsn : {RecipeDsn(), SymfonyDsn()}) {
    auto store = OpenStoreOrFail(dsn);
    const std::string r = UniqueResource("deleted");
    Lock lock = HeldOrFail(store, r);
    const std::string node = NodeOf(dsn, r);
    std::atomic<int64_t> lost_at{0};
    ipclock::LockWatch watch;
    ipclock::WatchOptions options;
    // Far longer than the test waits: only the node's watch event can be
    // what tells.
    options.check_interval = absl::Seconds(60);
    options.diagnostics = [&](const ipclock::Diagnostic& loss) {
      if (absl::IsAborted(loss.status)) lost_at = ipclock::Deadline::NowNanos();
    };
    absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(lock), options);
    ASSERT_OK(watched);
    absl::SleepFor(absl::Milliseconds(200));
    assert_int_equal(lost_at.load(), 0);
    const int64_t t0 = ipclock::Deadline::NowNanos();
    assert_string_equal(Peer(Server(), "delete", node).c_str(), "deleted");
    while (lost_at.load() == 0 && ipclock::Deadline::NowNanos() - t0 < 20'000'000'000) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    assert_true(lost_at.load() != 0);
    print_message("%s: a deleted node was noticed %.1f ms after zk_peer started\n",
                  dsn.c_str(), static_cast<double>(lost_at.load() - t0) / 1e6);
    absl::Status status = watched->status();
    assert_non_null(strstr(status.message().data(), "gone"));
    ASSERT_CODE(watched->Release(), absl::StatusCode::kAborted);
  }
}

void DisconnectShorterThanSessionIsNotLoss(void**) {
  OwnZooKeeper own;
  START_OWN(own);
  auto store = OpenStoreOrFail(own.dsn("session_timeout=6"));
  Lock lock = HeldOrFail(store, UniqueResource("blip"));
  std::atomic<int> lost{0};
  ipclock::LockWatch watch;
  ipclock::WatchOptions options;
  options.check_interval = absl::Milliseconds(200);
  options.diagnostics = [&](const ipclock::Diagnostic&) { lost = 1; };
  absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(lock), options);
  ASSERT_OK(watched);
  own.Freeze();
  absl::SleepFor(absl::Milliseconds(1500));
  // Cut off for a quarter of the session timeout: maybe unavailable, never lost.
  absl::Status during = watched->CheckNow();
  if (!during.ok()) ASSERT_CODE(during, absl::StatusCode::kUnavailable);
  own.Thaw();
  absl::Status after = absl::UnavailableError("");
  const double t0 = NowSeconds();
  while (!after.ok() && NowSeconds() - t0 < 20) {
    after = watched->CheckNow();
    if (!after.ok()) absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_OK(after);
  assert_int_equal(lost.load(), 0);
  ASSERT_OK(watched->Release());
}

// This test binary run as `zookeeper_store_test --hold DSN RESOURCE`: a
// holder in a process of its own (see HoldForTests()).
std::vector<std::string> HolderArgv(const std::string& dsn, const std::string& resource) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) fail_msg("readlink /proc/self/exe");
  self[n] = '\0';
  return {self, "--hold", dsn, resource};
}

// A holder started with HolderArgv(), past its "locked".
class Holder : public PeerProcess {
 public:
  Holder(const std::string& dsn, const std::string& resource)
      : PeerProcess(HolderArgv(dsn, resource)) {
    assert_string_equal(ReadLine().c_str(), "locked");
  }
};

void SessionExpiryIsLoss(void**) {
  REQUIRE_SERVER();
  // The holder is a process that stops (as in a long GC pause or a frozen
  // VM) for longer than its session timeout, while the servers run on.
  const std::string dsn = RecipeDsn();
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("expiry");
  Holder holder(dsn, r);
  kill(holder.pid(), SIGSTOP);
  // The servers expire the stopped holder's session (2 s): its node goes
  // and the next holder gets the lock, told that the previous one died.
  Lock next = LockOrFail(store, r);
  const double t0 = NowSeconds();
  ASSERT_OK(next.Acquire(absl::Seconds(20)));
  print_message("the stopped holder's lock was granted again after %.2f s\n", NowSeconds() - t0);
  assert_true(next.previous_owner_died());
  kill(holder.pid(), SIGCONT);
  // Woken, the old holder is told that it lost the lock, and its release
  // says so: it never believes it still holds it.
  std::string lost = holder.ReadLine();
  print_message("the old holder was told: %s\n", lost.c_str());
  assert_true(absl::StartsWith(lost, "lost: "));
  assert_string_equal(holder.ReadLine().c_str(), "released: ABORTED");
  assert_int_equal(holder.Wait(), 0);
  ASSERT_OK(next.Release());
}

void LostOnceTheSessionCanHaveExpired(void**) {
  // The servers cannot be reached (frozen): the client cannot hear that its
  // session expired. It must not say "lost" while the session must still
  // be alive, and must say it once the session can have expired.
  OwnZooKeeper own;
  START_OWN(own);
  auto store = OpenStoreOrFail(own.dsn("session_timeout=3"));
  Lock lock = HeldOrFail(store, UniqueResource("unreachable"));
  std::atomic<int> lost{0};
  std::atomic<double> lost_at{0};
  std::string lost_message;  // written once, before `lost`
  ipclock::LockWatch watch;
  ipclock::WatchOptions options;
  options.check_interval = absl::Milliseconds(200);
  options.diagnostics = [&](const ipclock::Diagnostic& loss) {
    if (!absl::IsAborted(loss.status)) return;
    lost_message = std::string(loss.status.message());
    lost_at = NowSeconds();
    lost = 1;
  };
  absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(lock), options);
  ASSERT_OK(watched);
  // Answered now: the servers cannot expire the session before this
  // moment plus the session timeout.
  const double answered = NowSeconds();
  ASSERT_OK(watched->CheckNow());
  own.Freeze();
  // Checks that end before then report at most Unavailable (judged only
  // while that holds, so that a stalled machine cannot fail the test).
  int early = 0;
  while (NowSeconds() < answered + 2.0) {
    absl::Status s = watched->CheckNow();
    if (NowSeconds() < answered + 3.0) {
      ++early;
      if (absl::IsAborted(s)) {
        fail_msg("reported lost %.2f s into a 3 s session", NowSeconds() - answered);
      }
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  if (lost.load() != 0 && lost_at.load() < answered + 3.0) {
    fail_msg("the watch reported a loss %.2f s into a 3 s session: %s",
             lost_at.load() - answered, lost_message.c_str());
  }
  while (NowSeconds() < answered + 4.0) absl::SleepFor(absl::Milliseconds(50));
  absl::Status late = watched->CheckNow();
  ASSERT_CODE(late, absl::StatusCode::kAborted);
  print_message("after %d early checks: %s\n", early, late.ToString().c_str());
  const double t0 = NowSeconds();
  while (lost.load() == 0 && NowSeconds() - t0 < 10) absl::SleepFor(absl::Milliseconds(20));
  assert_int_equal(lost.load(), 1);
  own.Thaw();
  // Whether the session survived the servers' own pause or not, the store
  // goes on: it opens a new session when the old one is gone.
  (void)watched->Release();
  Lock again = LockOrFail(store, UniqueResource("after"));
  ASSERT_OK(again.Acquire(absl::Seconds(20)));
}

void UnreachableEnsembleIsUnavailable(void**) {
  OwnZooKeeper own;
  START_OWN(own);
  auto store = OpenStoreOrFail(own.dsn("session_timeout=2"));
  own.Freeze();
  Lock lock = LockOrFail(store, UniqueResource("frozen"));
  const double t0 = NowSeconds();
  absl::Status s = lock.Acquire(absl::Milliseconds(500));
  ASSERT_CODE(s, absl::StatusCode::kUnavailable);
  assert_false(lock.is_acquired());
  print_message("acquire against a frozen server: %s after %.2f s\n", s.ToString().c_str(),
                NowSeconds() - t0);
  own.Thaw();
}

// --- Processes, owner death and listing -----------------------------------------------------

void KilledHolderIsListedThenReported(void**) {
  REQUIRE_SERVER();
  const std::string dsn = RecipeDsn();
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("died");
  Holder holder(dsn, r);
  const ipclock::HeldLock listed = OneListedLock(dsn, r);
  assert_string_equal(listed.mode.c_str(), "exclusive");
  assert_int_equal(listed.pid, holder.pid());
  assert_true(listed.fence.has_value());
  kill(holder.pid(), SIGKILL);
  assert_int_equal(holder.Wait(), 128 + SIGKILL);
  // Once the servers expire its session, the owner record it left says so.
  const double t0 = NowSeconds();
  std::string mode;
  while (NowSeconds() - t0 < 20) {
    std::vector<ipclock::HeldLock> held = ListedLocks(dsn, r);
    mode = held.empty() ? "" : held[0].mode;
    if (mode == "holder died") break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  assert_string_equal(mode.c_str(), "holder died");
  NextHolderIsToldOfTheDeathOnce(store, r);
}

// A client handle of the test server in the state `want`, or null after
// 20 s. `id` null starts a new session; a made-up id is refused by the
// servers as expired.
zhandle_t* HandleInState(const clientid_t* id, int want) {
  if (!ipclock::ZooKeeperLibrary().Load("zookeeper").ok()) return nullptr;
  zhandle_t* zh = ipclock::ZooKeeper().zookeeper_init2(Server().c_str(), nullptr, 2000, id,
                                                       nullptr, 0, nullptr);
  if (zh == nullptr) return nullptr;
  const double t0 = NowSeconds();
  while (ipclock::ZooKeeper().zoo_state(zh) != want && NowSeconds() - t0 < 20) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (ipclock::ZooKeeper().zoo_state(zh) == want) return zh;
  ipclock::ZooKeeper().zookeeper_close(zh);
  return nullptr;
}

// Allocations made meanwhile are not reported as leaks (ASan builds).
struct LeakCheckOff {
#if defined(__SANITIZE_ADDRESS__)
  LeakCheckOff() { __lsan_disable(); }
  ~LeakCheckOff() { __lsan_enable(); }
#else
  LeakCheckOff() {}
  ~LeakCheckOff() {}
#endif
};

// Two deletes whose paths live on the heap (longer than std::string keeps
// inline), where the client's stray free() of one would be seen: by glibc
// as a double free once the string frees it, by ASan at once.
struct TwoDeletes {
  std::vector<std::string> paths;
  std::vector<zoo_op_t> ops;
  std::vector<zoo_op_result_t> results;
  TwoDeletes(const std::string& first, const std::string& second)
      : paths{first, second}, ops(2), results(2) {
    for (size_t i = 0; i < 2; ++i) {
      ipclock::ZooKeeper().zoo_delete_op_init(&ops[i], paths[i].c_str(), -1);
    }
  }
};

void NeverCalled(int, const void*) { fail_msg("a refused multi-op ran its completion"); }

void MultiOnAnExpiredSessionIsRefused(void**) {
  REQUIRE_SERVER();
  // The ZooKeeper C client frees a path of ours when a multi-op's first
  // sub-request fails and a second follows (zookeeper_multi.h): on an
  // expired session every one fails, as on the release of a lock whose
  // session expired. No such multi-op reaches the client.
  clientid_t gone = {};
  gone.client_id = 0x1d0c0000LL + getpid();
  memset(gone.passwd, 'x', sizeof(gone.passwd));
  zhandle_t* zh = HandleInState(&gone, *ipclock::ZooKeeper().ZOO_EXPIRED_SESSION_STATE);
  assert_non_null(zh);
  {
    TwoDeletes multi("/ipclock-test/expired-session-first-path",
                     "/ipclock-test/expired-session-second-path");
    assert_int_equal(ipclock::SendZkMulti(zh, multi.ops, multi.results.data(), &NeverCalled,
                                          nullptr),
                     ZINVALIDSTATE);
    assert_string_equal(multi.paths[0].c_str(), "/ipclock-test/expired-session-first-path");
  }
  ipclock::ZooKeeper().zookeeper_close(zh);
}

void MultiWhoseFirstPathIsRefusedFreesNothingOfOurs(void**) {
  REQUIRE_SERVER();
  // The same fault on a live session, as when a session expires between
  // SendZkMulti's look at its state and the client's: the client is handed
  // copies of the paths, and the one it frees is never freed again.
  zhandle_t* zh = HandleInState(nullptr, *ipclock::ZooKeeper().ZOO_CONNECTED_STATE);
  assert_non_null(zh);
  {
    TwoDeletes multi("/ipclock-test//a-path-the-client-refuses",
                     "/ipclock-test/a-path-after-the-refused-one");
    int rc;
    {
      // The client also drops the sub-requests' completion entries it made
      // (its leak, not ours), which the leak checker would report.
      LeakCheckOff off;
      rc = ipclock::SendZkMulti(zh, multi.ops, multi.results.data(), &NeverCalled, nullptr);
    }
    print_message("a multi-op whose first path is refused: %s\n",
                  ipclock::ZooKeeper().zerror(rc));
    assert_true(rc < 0);
    assert_string_equal(multi.paths[0].c_str(), "/ipclock-test//a-path-the-client-refuses");
    assert_ptr_equal(multi.ops[0].delete_op.path, multi.paths[0].c_str());
  }
  ipclock::ZooKeeper().zookeeper_close(zh);
}

void ForkedChildHasItsOwnSession(void**) {
  REQUIRE_SERVER();
#if defined(__SANITIZE_THREAD__)
  // GCC 12's ThreadSanitizer aborts ("dup thread") when a child forked
  // from a process with running threads starts threads that reuse their
  // stacks, as the child's own session does. Plain and ASan builds run it.
  print_message("skipped under ThreadSanitizer: threads started in a forked child\n");
  skip();
#endif
  ForkedChildIsAnotherHolder(OpenStoreOrFail(RecipeDsn()), UniqueResource("fork"));
}

// --- The CLI ------------------------------------------------------------------------------------

void CliRunListAndLoss(void**) {
  REQUIRE_SERVER();
  const std::string cli = IpclockPath();
  if (cli.empty()) fail_msg("no ipclock binary (IPCLOCK_BUILD_ROOT)");
  const std::string dsn = RecipeDsn();
  const std::string r = UniqueResource("cli");
  int code = 0;
  std::string out = RunForOutput(
      {cli, "run", "--store", dsn, "--key", r, "--", "sh", "-c", "echo \"fence=$IPCLOCK_FENCE\""},
      &code);
  assert_int_equal(code, 0);
  assert_true(absl::StartsWith(out, "fence="));
  assert_true(out.size() > strlen("fence="));
  // Busy: held here, `ipclock run -n` gives the conflict status.
  auto store = OpenStoreOrFail(dsn);
  Lock holder = HeldOrFail(store, r);
  RunForOutput({cli, "run", "-n", "--store", dsn, "--key", r, "--", "true"}, &code);
  assert_int_equal(code, 1);
  // `ipclock list` reads the node.
  out = RunForOutput({cli, "list", "--json", "--store", dsn, "--key", r}, &code);
  assert_int_equal(code, 0);
  assert_true(absl::StrContains(out, absl::StrCat("\"resource\":\"", r, "\"")));
  assert_true(absl::StrContains(out, absl::StrCat("\"pid\":", getpid())));
  // A waiter is named, with since when it waits (its node's ctime).
  const pid_t waiter = Spawn({cli, "run", "--store", dsn, "--key", r, "-w", "30", "--", "true"});
  bool named = false;
  for (const double t1 = NowSeconds(); !named && NowSeconds() - t1 < 10;) {
    const std::vector<ipclock::HeldLock> held = ListedLocks(dsn, r);
    named = held.size() == 1 && held[0].waiter_list.size() == 1 &&
            held[0].waiter_list[0].pid == waiter && held[0].waiter_list[0].since.has_value() &&
            *held[0].waiter_list[0].since <= absl::ToUnixSeconds(absl::Now());
    if (!named) absl::SleepFor(absl::Milliseconds(50));
  }
  assert_true(named);
  ASSERT_OK(holder.Release());
  assert_int_equal(WaitPlain(waiter, 30), 0);
  // The lock lost under a running command (its node deleted): the run
  // fails and says so. (A build with the watch in `ipclock run` stops the
  // command at once; this one notices at release.)
  const std::string err = MakeTempDir() + "/stderr";
  SpawnOptions spawn;
  spawn.stderr_path = err;
  pid_t run = Spawn({cli, "run", "--store", dsn, "--key", r, "--", "sleep", "3"}, spawn);
  std::string node;
  const double t0 = NowSeconds();
  while (node.empty() && NowSeconds() - t0 < 10) {
    ipclock::ListRequest request;
    request.resource = r;
    absl::StatusOr<ipclock::HeldLocks> held = ipclock::ListHeldLocks(dsn, request);
    if (held.ok() && !held->locks.empty()) node = held->locks[0].object;
    absl::SleepFor(absl::Milliseconds(50));
  }
  assert_false(node.empty());
  assert_string_equal(Peer(Server(), "delete", node).c_str(), "deleted");
  code = WaitPlain(run, 30);
  assert_true(code != 0 && code != -1);
  const std::string message = ReadFileOrEmpty(err);
  print_message("ipclock run exited %d: %s", code, message.c_str());
  assert_true(absl::StrContains(message, "gone"));
}

}  // namespace ipclock_test
