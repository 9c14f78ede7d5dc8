// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The etcd store's handoffs with `etcdctl lock` on one resource, run by
// etcd_store_test.cc's table: fences that grow whichever client held
// before, a death told only to the holder that came next, and no lease
// left behind by `ipclock run`.

#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ipclock/admin/inspect.h"
#include "peer_process.h"
#include "spawn_util.h"
#include "etcd_store_test.h"
#include "listed_locks.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

namespace {

// A shell loop that takes `name` `times` times with `lock`, each time
// appending `line` (evaluated by sh inside the lock) to `file`.
std::string LockLoop(const std::string& lock, int times, const std::string& line,
                     const std::string& file) {
  return absl::StrCat("for i in $(seq ", times, "); do ", lock, " -- sh -c 'echo ", line, " >> ",
                      file, "' || exit 1; done");
}

}  // namespace

// Three `etcdctl lock` loops and three `ipclock run` loops on one
// resource, in one FIFO queue: every holder appends its token inside the
// lock, so the file is in lock order. etcdctl's ETCD_LOCK_REV and
// ipclock's IPCLOCK_FENCE must only grow along it, across every handoff
// between the two clients (ipclock's key's create revision went back at
// each etcdctl-to-ipclock handoff: the key had queued before etcdctl's
// holder saw itself first).
void FencesGrowAcrossClients(void**) {
  REQUIRE_SERVER();
  constexpr int kLoops = 3;
  constexpr int kEach = 35;  // 6 x 35 = 210 holders, 209 handoffs
  const std::string r = UniqueResource("storm");
  const std::string file = MakeTempDir() + "/order";
  const std::string ctl =
      absl::StrCat(Etcdctl(), " --endpoints ", Endpoint(), " lock ", EtcdctlName(r));
  const std::string run = absl::StrCat(IpclockPath(), " run --store ", Dsn(), " --key ", r);
  const double t0 = NowSeconds();
  std::vector<pid_t> loops;
  for (int i = 0; i < kLoops; ++i) {
    loops.push_back(Started(
        Spawn({"sh", "-c", LockLoop(ctl, kEach, "\"e $ETCD_LOCK_REV\"", file)})));
    loops.push_back(Started(Spawn(
        {"sh", "-c", LockLoop(run, kEach, "\"i $IPCLOCK_FENCE $ETCD_LOCK_REV\"", file)})));
  }
  for (pid_t p : loops) assert_int_equal(Reap(p, 120), 0);
  const double took = NowSeconds() - t0;

  int lines = 0, to_ipclock = 0, to_etcdctl = 0;
  int64_t last = 0;
  char last_client = 0;
  for (absl::string_view line : absl::StrSplit(ReadFileOrEmpty(file), '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    int64_t fence = 0;
    if (f.size() < 2 || !absl::SimpleAtoi(f[1], &fence)) {
      fail_msg("line %d: \"%s\"", lines, std::string(line).c_str());
    }
    const char client = f[0][0];
    // ipclock's ETCD_LOCK_REV is its fence, as etcdctl's is its own.
    if (client == 'i' && (f.size() != 3 || f[2] != f[1])) {
      fail_msg("line %d: IPCLOCK_FENCE and ETCD_LOCK_REV differ: %s", lines,
               std::string(line).c_str());
    }
    if (fence <= last) {
      fail_msg("line %d: the fence went from %lld (%s) to %lld (%s)", lines,
               static_cast<long long>(last), last_client == 'e' ? "etcdctl" : "ipclock",
               static_cast<long long>(fence), client == 'e' ? "etcdctl" : "ipclock");
    }
    if (last_client != 0 && client != last_client) ++(client == 'i' ? to_ipclock : to_etcdctl);
    last = fence;
    last_client = client;
    ++lines;
  }
  print_message("%d holders in %.1f s, fences growing; %d handoffs etcdctl->ipclock, %d "
                "ipclock->etcdctl\n", lines, took, to_ipclock, to_etcdctl);
  assert_int_equal(lines, 2 * kLoops * kEach);
  // The two clients took turns: the handoffs between them are what is tested.
  assert_true(to_ipclock >= 20 && to_etcdctl >= 20);
}

// An ipclock holder killed, then an `etcdctl lock` holder that releases
// cleanly: the ipclock holders after it are not told of a death (their
// previous holder was etcdctl's), though the dead holder's record is still
// there, since etcdctl neither reads nor clears it. Once through the fast
// path (nothing queued when they come), once from the queue, a reader
// (whose turn is a read) and a writer.
void DeathToldOnlyToTheNextHolder(void**) {
  REQUIRE_SERVER();
  const std::string dsn = Dsn("ttl=2");
  const std::string r = UniqueResource("died-then-etcdctl");
  const std::string dir = MakeTempDir();
  const std::string say = "echo \"died=$IPCLOCK_PREVIOUS_OWNER_DIED\"";
  int code = 0;

  // A holder killed as a whole service would be.
  KillSleepingHolder(StartSleepingHolder(dsn, r, dir + "/held1"), dir + "/held1");
  // etcdctl queues behind the dead holder's key, takes the lock once its
  // lease ends, and releases cleanly.
  assert_int_equal(Reap(CtlLock(EtcdctlName(r), "true"), 30), 0);
  std::vector<ipclock::HeldLock> listed = ListedLocks(dsn, r);
  assert_true(listed.size() == 1 && listed[0].mode == "holder died");  // the record stayed
  std::vector<std::string> shared = Run(dsn, r, {"sh", "-c", say});
  shared.insert(shared.begin() + 2, "-s");
  assert_string_equal(RunForOutput(shared, &code).c_str(), "died=");
  assert_int_equal(code, 0);
  assert_string_equal(RunForOutput(Run(dsn, r, {"sh", "-c", say}), &code).c_str(), "died=");
  assert_int_equal(code, 0);

  // The same from the queue: dead holder, etcdctl, an ipclock reader, an
  // ipclock writer.
  const std::string order = dir + "/order";
  const pid_t run = StartSleepingHolder(dsn, r, dir + "/held2");
  std::vector<pid_t> next = {CtlLock(EtcdctlName(r), absl::StrCat("echo etcdctl >> ", order))};
  AwaitQueueLength(r, 2);
  shared = Run(dsn, r, {"sh", "-c", absl::StrCat("echo reader $(", say, ") >> ", order)});
  shared.insert(shared.begin() + 2, "-s");
  next.push_back(Started(Spawn(shared)));
  AwaitQueueLength(r, 3);
  next.push_back(Started(Spawn(
      Run(dsn, r, {"sh", "-c", absl::StrCat("echo writer $(", say, ") >> ", order)}))));
  AwaitQueueLength(r, 4);
  KillSleepingHolder(run, dir + "/held2");
  for (pid_t p : next) assert_int_equal(Reap(p, 30), 0);
  assert_string_equal(ReadFileOrEmpty(order).c_str(),
                      "etcdctl\nreader died=\nwriter died=\n");
}

// `ipclock run` revokes its lease as it exits, however the run ends short
// of a SIGKILL of ipclock itself: `etcdctl lease list` keeps none of them
// (etcdctl 3.4's own `lock` leaves its session's lease until its TTL). The
// runs' leases have a TTL of their own, to tell them from the suite's.
void RunLeavesNoLease(void**) {
  REQUIRE_SERVER();
  const std::string dsn = Dsn("ttl=37");
  const std::string r = UniqueResource("lease");
  const std::string dir = MakeTempDir();
  int code = 0;
  RunForOutput(Run(dsn, r, {"true"}), &code);  // plain
  assert_int_equal(code, 0);
  RunForOutput(Run(dsn, r, {"sh", "-c", "kill -9 $$"}), &code);  // released as dead
  assert_int_equal(code, 128 + SIGKILL);
  // A wait behind etcdctl's holder, that gets the lock...
  pid_t peer = CtlLock(EtcdctlName(r), HoldUntilGo(dir));
  assert_true(WaitForFile(dir + "/held", 20));
  const pid_t waiter = Started(Spawn(Run(dsn, r, {"true"})));
  AwaitQueueLength(r, 2);
  // ... one that gives up...
  std::vector<std::string> gives_up = Run(dsn, r, {"true"});
  gives_up.insert(gives_up.begin() + 2, {"-w", "0.3"});
  RunForOutput(gives_up, &code);
  assert_int_equal(code, 1);
  assert_true(WriteFile(dir + "/go", ""));
  assert_int_equal(Reap(peer, 20), 0);
  assert_int_equal(Reap(waiter, 20), 0);
  // ... and one stopped with SIGTERM, which it passes on to COMMAND.
  const pid_t stopped =
      Started(Spawn(Run(dsn, r, {"sh", "-c", absl::StrCat("touch ", dir, "/in; exec sleep 60")})));
  assert_true(WaitForFile(dir + "/in", 20));
  kill(stopped, SIGTERM);
  assert_int_equal(Reap(stopped, 20), 128 + SIGTERM);

  std::vector<std::string> ours;
  for (absl::string_view line : absl::StrSplit(Ctl({"lease", "list"}), '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "found")) continue;
    const std::string lease(line);
    if (absl::StrContains(Ctl({"lease", "timetolive", lease}), "granted with TTL(37s)")) {
      ours.push_back(lease);
    }
  }
  if (!ours.empty()) fail_msg("leases left by the runs: %s", absl::StrJoin(ours, " ").c_str());
}

}  // namespace ipclock_test
