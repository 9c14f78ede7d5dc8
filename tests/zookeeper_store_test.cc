// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The ZooKeeper store against the standalone server of
// tools/test-servers/zookeeper.sh ($IPCLOCK_TEST_ZOOKEEPER) and servers it
// starts itself ($IPCLOCK_TEST_PORT_BASE+93.., to freeze with SIGSTOP and
// stop): the recipe's layout, order and fences as the servers hold them
// (read back with tests/zk_peer.c and the servers' own four-letter words),
// Symfony's layout with another client as the peer both ways, every way a
// held lock is lost (its node deleted, its session expired) reported as
// Aborted, a disconnection shorter than the session timeout not reported
// as a loss, a waiter that gets SIGTERM leaving the queue before it dies,
// `ipclock list`, and `ipclock run` end to end.
//
// Skipped without the server (failed under CI=true).

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
#include "absl/strings/str_join.h"
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
#include "loss_log.h"
#include "listed_locks.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

std::string Server() {
  return absl::StrCat("127.0.0.1:", DsnPort(EnvOrNull("IPCLOCK_TEST_ZOOKEEPER")));
}

// The recipe under /ipclock-test, sessions of 2 s.
std::string RecipeDsn(const std::string& extra) {
  return absl::StrCat(EnvOrNull("IPCLOCK_TEST_ZOOKEEPER"),
                      "/ipclock-test?session_timeout=2&secret=none", extra);
}
// Symfony's layout at the root, as Symfony's StoreFactory connects.
std::string SymfonyDsn() {
  return absl::StrCat(EnvOrNull("IPCLOCK_TEST_ZOOKEEPER"),
                      "?format=symfony&session_timeout=2&secret=none");
}

std::string PeerPath() {
  const char* root = getenv("IPCLOCK_BUILD_ROOT");
  return absl::StrCat(root != nullptr ? root : ".", "/tests/zk_peer");
}

// zk_peer's one-shot commands; its output, trimmed.
std::string Peer(const std::string& server, const std::string& cmd, const std::string& path) {
  int code = 0;
  return RunForOutput({PeerPath(), server, cmd, path}, &code);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipEmpty())) out.emplace_back(l);
  return out;
}

int64_t CzxidOf(const std::string& server, const std::string& path) {
  std::string stat = Peer(server, "stat", path);
  int64_t czxid = -1;
  for (absl::string_view f : absl::StrSplit(stat, ' ')) {
    if (absl::ConsumePrefix(&f, "czxid=")) (void)absl::SimpleAtoi(f, &czxid);
  }
  return czxid;
}

// The path of the node that `lock` holds, from `ipclock list`'s reading.
std::string NodeOf(const std::string& dsn, const std::string& resource) {
  std::vector<ipclock::HeldLock> held = ListedLocks(dsn, resource);
  if (held.empty()) fail_msg("no node listed for %s", resource.c_str());
  return held[0].object;
}

namespace {

using ipclock::Lock;
using ipclock::LockMode;
using ipclock::Store;

// --- Names, without a server ------------------------------------------------------------

void NamesAndOrdering(void**) {
  using ipclock::DecodeResourceNode;
  using ipclock::EncodeResourceNode;
  assert_string_equal(EncodeResourceNode("invoice-42").c_str(), "invoice-42");
  assert_string_equal(EncodeResourceNode("a/b c").c_str(), "a%2Fb%20c");
  assert_string_equal(EncodeResourceNode(".").c_str(), "%2E");
  assert_string_equal(EncodeResourceNode("..").c_str(), "%2E.");
  assert_string_equal(EncodeResourceNode(std::string("\0\xff%", 3)).c_str(), "%00%FF%25");
  for (const std::string& r : {std::string("x"), std::string("a/b c"), std::string(".."),
                               std::string("\0\x01\xff/../zookeeper", 16), std::string(1024, 'q')}) {
    std::optional<std::string> back = DecodeResourceNode(EncodeResourceNode(r));
    assert_true(back.has_value());
    assert_true(*back == r);
  }
  // Only the canonical form decodes.
  assert_false(DecodeResourceNode("%41").has_value());
  assert_false(DecodeResourceNode("a b").has_value());
  assert_false(DecodeResourceNode("%2").has_value());
  assert_false(DecodeResourceNode(".x").has_value());
  // Symfony's names (vectors from PHP's strtr + sha1).
  assert_string_equal(ipclock::SymfonyNodeName("invoice-42").c_str(), "invoice-42");
  assert_string_equal(ipclock::SymfonyNodeName("foo/bar").c_str(),
                      "foo-bar-17cdeaefa5cc6022481c824e15a47a7726f593dd");
  assert_string_equal(ipclock::SymfonyNodeName("/foo/bar").c_str(),
                      "-foo-bar-a82cce35fd860de6f63f97e6c482dc6a14d002e8");
  ASSERT_OK(ipclock::ValidZooKeeperName("zookeeper", false));
  ASSERT_OK(ipclock::ValidZooKeeperName("h\xc3\xa9llo", true));
  for (const std::string& bad : {std::string("zookeeper"), std::string("."), std::string(".."),
                                 std::string("a\nb"), std::string("a\0b", 3),
                                 std::string("\xff"), std::string("\xc2\x85"),
                                 std::string("\xef\xbf\xbf"), std::string("\xed\xa0\x80")}) {
    ASSERT_CODE(ipclock::ValidZooKeeperName(bad, true), absl::StatusCode::kInvalidArgument);
  }
  // The recipe's rules.
  std::vector<ipclock::LockChild> sorted = ipclock::SortedLockChildren(
      {"owner", "read-b-0000000003", "write-a-0000000001", "read-c-0000000002",
       "write-d-0000000004", "read-e-0000000005", "stranger"});
  assert_int_equal(sorted.size(), 5);
  assert_string_equal(sorted[0].name.c_str(), "write-a-0000000001");
  assert_string_equal(sorted[0].tag.c_str(), "a");
  assert_int_equal(ipclock::HolderCount(sorted), 1);
  assert_false(ipclock::Blocker(sorted, sorted[0]).has_value());
  // A reader waits for the writer before it, not for other readers.
  assert_string_equal(ipclock::Blocker(sorted, sorted[2])->name.c_str(), "write-a-0000000001");
  // A writer waits for the node right before it, of any kind.
  assert_string_equal(ipclock::Blocker(sorted, sorted[3])->name.c_str(), "read-b-0000000003");
  assert_string_equal(ipclock::Blocker(sorted, sorted[4])->name.c_str(), "write-d-0000000004");
  std::vector<ipclock::LockChild> readers =
      ipclock::SortedLockChildren({"read-x-0000000007", "read-y-0000000008", "write-z-0000000009"});
  assert_int_equal(ipclock::HolderCount(readers), 2);
  assert_false(ipclock::ParseLockChild("write-a-000000001").has_value());
  assert_false(ipclock::ParseLockChild("write-a-00000000x1").has_value());
}

// --- DSNs -------------------------------------------------------------------------------

void DsnFormsAndBadInput(void**) {
  REQUIRE_SERVER();
  const std::string server = Server();
  for (const std::string& dsn :
       {absl::StrCat("zookeeper://", server, ",", server, "/ipclock-test/list?secret=none"),
        absl::StrCat("zookeeper://", server, "?format=recipe&connect_timeout=3&secret=none"),
        absl::StrCat("zookeeper://", server, "/deep/er/path?format=symfony&secret=none"),
        absl::StrCat("zookeeper://", server, "/ipclock-test?prefix=app:&secret=none")}) {
    auto store = OpenStoreOrFail(dsn);
    Lock lock = HeldOrFail(store, UniqueResource("dsn"));
  }
  for (const std::string& dsn :
       {absl::StrCat("zookeeper://user:pw@", server), absl::StrCat("zookeeper://", server, "?format=bogus"),
        absl::StrCat("zookeeper://", server, "/"), absl::StrCat("zookeeper://", server, "/zookeeper/x"),
        absl::StrCat("zookeeper://", server, "/a/./b"), absl::StrCat("zookeeper://", server, "?session_timeout=0"),
        absl::StrCat("zookeeper://", server, "?bogus=1"), absl::StrCat("zookeeper://", server, "?naming=parse-lock"),
        absl::StrCat("zookeeper://", server, "?secret=short"), std::string("zookeeper://h1:1,,h2:2"),
        std::string("zookeeper://h1:x,h2:2"), std::string("zookeeper:"), std::string("zookeeper://"),
        std::string("zookeeper://[::1]:1,[::1]:2")}) {
    absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
    if (store.status().code() != absl::StatusCode::kInvalidArgument) {
      fail_msg("%s: expected InvalidArgument, got %s", dsn.c_str(),
               store.status().ToString().c_str());
    }
  }
  // Nothing listens: Unavailable within connect_timeout, naming the server.
  const double took =
      ExpectUnreachable("zookeeper://127.0.0.1", "?connect_timeout=0.5&secret=none");
  print_message("an unreachable ensemble was reported after %.2f s\n", took);
  // The same with the default connect_timeout (5 s): the client library
  // would retry quietly until then, but every server refuses the
  // connection, and that ends the wait. A server that listens beside a
  // refusing one makes the session as before.
  const int free_port = FreeOwnPort(90);
  if (free_port == 0) fail_msg("no free port in $IPCLOCK_TEST_PORT_BASE+90..98");
  const double t0 = NowSeconds();
  absl::StatusOr<std::shared_ptr<Store>> refused = ipclock::StoreFromDsn(absl::StrCat(
      "zookeeper://127.0.0.1:", free_port, ",localhost:", free_port, "?secret=none"));
  ASSERT_CODE(refused, absl::StatusCode::kUnavailable);
  if (!absl::StrContains(refused.status().message(), "every ZooKeeper server refused")) {
    fail_msg("%s", refused.status().ToString().c_str());
  }
  print_message("servers that refuse connections were reported after %.2f s: %s\n",
                NowSeconds() - t0, std::string(refused.status().message()).c_str());
  auto mixed = OpenStoreOrFail(
      absl::StrCat("zookeeper://127.0.0.1:", free_port, ",", server, "?secret=none"));
  Lock held = HeldOrFail(mixed, UniqueResource("mixed"));
}

// --- The recipe on the server ---------------------------------------------------------------

void RecipeLayoutOnTheServer(void**) {
  REQUIRE_SERVER();
  const std::string server = Server();
  auto store = OpenStoreOrFail(RecipeDsn());
  const std::string r = UniqueResource("lay/out x");
  const std::string parent = absl::StrCat("/ipclock-test/", ipclock::EncodeResourceNode(r));
  Lock writer = HeldOrFail(store, r);
  std::vector<std::string> children = Lines(Peer(server, "ls", parent));
  assert_int_equal(children.size(), 2);
  assert_string_equal(children[0].c_str(), "owner");
  assert_true(absl::StartsWith(children[1], "write-"));
  const std::string node = absl::StrCat(parent, "/", children[1]);
  // The owner record names the holder's node; the node says who made it.
  assert_string_equal(Peer(server, "get", parent + "/owner").c_str(), children[1].c_str());
  assert_true(absl::StrContains(Peer(server, "get", node), absl::StrCat("pid=", getpid())));
  assert_true(absl::StrContains(Peer(server, "stat", node), "ephemeral=1"));
  // The fence is the node's creation zxid.
  assert_true(writer.fence().has_value());
  assert_int_equal(static_cast<int64_t>(*writer.fence()), CzxidOf(server, node));
  ASSERT_OK(writer.Release());
  // A clean release takes the owner record with it.
  std::string after = Peer(server, "ls", parent);
  assert_true(after.empty() || after == "nonode");
  // Readers: "read-" nodes, no owner record, no fence.
  Lock reader = HeldSharedOrFail(store, r);
  children = Lines(Peer(server, "ls", parent));
  assert_int_equal(children.size(), 1);
  assert_true(absl::StartsWith(children[0], "read-"));
  assert_false(reader.fence().has_value());
}

// Each holder is a process of its own (`ipclock run`, which prints the
// fence it got), so that no test process forks with client threads running
// (ThreadSanitizer cannot follow threads started in such a child).
void FenceGrowsAcrossHoldersAndContainers(void**) {
  REQUIRE_SERVER();
  const std::string dsn = RecipeDsn();
  const std::string r = UniqueResource("fence");
  const std::string parent = absl::StrCat("/ipclock-test/", ipclock::EncodeResourceNode(r));
  std::vector<uint64_t> fences;
  for (int i = 0; i < 8; ++i) {
    if (i == 6) {
      // The servers delete the empty resource node (a container, checked
      // every second here): the next holder's node is in a new one, whose
      // sequence numbers start again at 0. The fence must still grow.
      const double t0 = NowSeconds();
      while (Peer(Server(), "stat", parent) != "nonode" && NowSeconds() - t0 < 30) {
        absl::SleepFor(absl::Milliseconds(200));
      }
      assert_string_equal(Peer(Server(), "stat", parent).c_str(), "nonode");
    }
    int code = 0;
    std::string out = RunForOutput({IpclockPath(), "run", "--store", dsn, "--key", r, "--", "sh",
                                    "-c", "echo $IPCLOCK_FENCE"},
                                   &code);
    assert_int_equal(code, 0);
    uint64_t fence = 0;
    if (!absl::SimpleAtoi(out, &fence)) fail_msg("no fence in \"%s\"", out.c_str());
    fences.push_back(fence);
  }
  for (size_t i = 1; i < fences.size(); ++i) {
    if (fences[i] <= fences[i - 1]) {
      fail_msg("fence %zu (%llu) is not above fence %zu (%llu)", i,
               static_cast<unsigned long long>(fences[i]), i - 1,
               static_cast<unsigned long long>(fences[i - 1]));
    }
  }
  print_message("fences: %llu .. %llu, growing across a new resource node\n",
                static_cast<unsigned long long>(fences.front()),
                static_cast<unsigned long long>(fences.back()));
}

// The servers' watches by path ("wchp"): path -> sessions watching it.
std::vector<std::pair<std::string, int>> WatchesByPath(int port) {
  std::string out = RawExchange(port, "wchp", [](const std::string&) { return false; }, 2);
  std::vector<std::pair<std::string, int>> watches;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    if (line[0] == '/') {
      watches.emplace_back(std::string(line), 0);
    } else if (!watches.empty() && absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "0x")) {
      ++watches.back().second;
    }
  }
  return watches;
}

void WaitersQueueInOrderWithoutHerd(void**) {
  REQUIRE_SERVER();
  const std::string server = Server();
  const std::string dsn = RecipeDsn();
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("fifo");
  const std::string parent = absl::StrCat("/ipclock-test/", ipclock::EncodeResourceNode(r));
  Lock holder = HeldOrFail(store, r);
  // Each waiter is `ipclock run` (a session of its own), appending its
  // number to a file once it holds the lock.
  const std::string order = MakeTempDir() + "/order";
  constexpr int kWaiters = 4;
  std::vector<pid_t> pids;
  for (int i = 0; i < kWaiters; ++i) {
    pids.push_back(Spawn({IpclockPath(), "run", "--store", dsn, "--key", r, "--", "sh", "-c",
                          absl::StrCat("echo ", i, " >> ", order)}));
    // The next waiter starts once this one is in the queue.
    const double t0 = NowSeconds();
    while (Lines(Peer(server, "ls", parent)).size() < static_cast<size_t>(i + 3) &&
           NowSeconds() - t0 < 20) {
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  // No herd: every queued node but the last is watched by exactly one
  // session (its successor's), and the last by none.
  std::vector<std::string> nodes;
  for (const std::string& child : Lines(Peer(server, "ls", parent))) {
    if (child != "owner") nodes.push_back(absl::StrCat(parent, "/", child));
  }
  std::sort(nodes.begin(), nodes.end(), [](const std::string& a, const std::string& b) {
    return a.substr(a.size() - 10) < b.substr(b.size() - 10);
  });
  assert_int_equal(nodes.size(), kWaiters + 1);
  std::vector<std::pair<std::string, int>> watches =
      WatchesByPath(DsnPort(EnvOrNull("IPCLOCK_TEST_ZOOKEEPER")));
  for (size_t i = 0; i < nodes.size(); ++i) {
    int sessions = 0;
    for (const auto& [path, count] : watches) {
      if (path == nodes[i]) sessions = count;
    }
    assert_int_equal(sessions, i + 1 < nodes.size() ? 1 : 0);
  }
  ASSERT_OK(holder.Release());
  for (pid_t pid : pids) assert_int_equal(WaitPlain(pid, 60), 0);
  assert_string_equal(ReadFileOrEmpty(order).c_str(), "0\n1\n2\n3\n");
}

// A waiter that gets SIGINT, SIGTERM or SIGHUP leaves the queue before it
// dies by the signal (128+N): its node is deleted and its session closed,
// so the waiter behind it gets the lock when the holder lets go, not once
// the servers expire the killed waiter's session (20 s here).
void SignalledWaiterLeavesTheQueue(void**) {
  REQUIRE_SERVER();
  const std::string server = Server();
  const std::string dsn = absl::StrCat(EnvOrNull("IPCLOCK_TEST_ZOOKEEPER"),
                                       "/ipclock-test?session_timeout=20&secret=none");
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("sigwait");
  const std::string parent = absl::StrCat("/ipclock-test/", ipclock::EncodeResourceNode(r));
  const std::string next = MakeTempDir() + "/next";
  Lock holder = HeldOrFail(store, r);
  auto await_nodes = [&](size_t n) {
    size_t nodes = 0;
    for (const double t0 = NowSeconds(); NowSeconds() - t0 < 10;) {
      const std::vector<std::string> children = Lines(Peer(server, "ls", parent));
      nodes = static_cast<size_t>(std::count_if(children.begin(), children.end(),
                                                [](const std::string& c) { return c != "owner"; }));
      if (nodes == n) return;
      absl::SleepFor(absl::Milliseconds(20));
    }
    fail_msg("the queue of %s never held %zu nodes (it holds %zu)", r.c_str(), n, nodes);
  };
  auto run = [&](const std::vector<std::string>& command) {
    std::vector<std::string> argv = {IpclockPath(), "run", "--store", dsn, "--key", r, "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    return Spawn(argv);
  };
  for (int sig : {SIGINT, SIGHUP}) {
    pid_t waiter = run({"true"});
    await_nodes(2);
    kill(waiter, sig);
    assert_int_equal(WaitPlain(waiter, 10), 128 + sig);
    await_nodes(1);
  }
  pid_t waiter = run({"true"});
  await_nodes(2);
  pid_t later = run({"touch", next});
  await_nodes(3);
  kill(waiter, SIGTERM);
  assert_int_equal(WaitPlain(waiter, 10), 128 + SIGTERM);
  const double t0 = NowSeconds();
  ASSERT_OK(holder.Release());
  assert_true(WaitForFile(next, 30));
  const double took = NowSeconds() - t0;
  print_message("the next waiter got the lock %.0f ms after the release (the killed "
                "waiter's session: 20 s)\n", took * 1000);
  assert_true(took < 5);
  assert_int_equal(WaitPlain(later, 10), 0);
}

void SharedLocksFollowTheQueue(void**) {
  REQUIRE_SERVER();
  // Long sessions (20 s asked, 10 s granted by the test server's tick of
  // 500 ms), not the suite's 2 s: on a loaded machine a 2 s session can
  // expire under the waiting writer, whose node then goes and who queues
  // again at the end, rightly behind the late reader below.
  const std::string dsn = absl::StrCat(EnvOrNull("IPCLOCK_TEST_ZOOKEEPER"),
                                       "/ipclock-test?session_timeout=20&secret=none");
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("rw");
  Lock r1 = LockOrFail(store, r), r2 = LockOrFail(store, r);
  assert_true(TryOrFail(r1, LockMode::kShared));
  assert_true(TryOrFail(r2, LockMode::kShared));
  const std::string written = MakeTempDir() + "/written";
  // The writer waits in Acquire() alone, so that the third node seen below
  // is its place in the queue. (`ipclock run` tries once first, and the
  // node of that try, gone again before the wait's own is made, would let
  // the late reader in ahead of a writer not yet queued.)
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) fail_msg("readlink /proc/self/exe");
  self[n] = '\0';
  pid_t writer = Spawn({self, "--write", dsn, r, written});
  const std::string parent = absl::StrCat("/ipclock-test/", ipclock::EncodeResourceNode(r));
  const double t0 = NowSeconds();
  while (Lines(Peer(Server(), "ls", parent)).size() < 3 && NowSeconds() - t0 < 20) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  // A reader that comes after a queued writer waits for it (no writer
  // starvation), although only readers hold the lock.
  Lock late = LockOrFail(store, r);
  const std::vector<std::string> queue = Lines(Peer(Server(), "ls", parent));
  if (TryOrFail(late, LockMode::kShared)) {
    int status = 0;
    const pid_t gone = waitpid(writer, &status, WNOHANG);
    fail_msg("a late reader got in ahead of the queued writer; the queue before its try: %s; "
             "after: %s; the writer %s (status %d)",
             absl::StrJoin(queue, " ").c_str(),
             absl::StrJoin(Lines(Peer(Server(), "ls", parent)), " ").c_str(),
             gone == writer ? "had ended" : "runs", status);
  }
  assert_false(FileExists(written));
  ASSERT_OK(r1.Release());
  ASSERT_OK(r2.Release());
  ASSERT_OK(late.Acquire(absl::Seconds(20), LockMode::kShared));
  // The writer had its turn before the late reader.
  assert_true(FileExists(written));
  assert_int_equal(WaitPlain(writer, 30), 0);
}

// --- Symfony's layout ------------------------------------------------------------------------

void SymfonyPeerBothWays(void**) {
  REQUIRE_SERVER();
  const std::string server = Server();
  auto store = OpenStoreOrFail(SymfonyDsn());
  for (const std::string& r : {UniqueResource("sf"), UniqueResource("sf/with/slashes")}) {
    const std::string path = absl::StrCat("/", ipclock::SymfonyNodeName(r));
    // The peer holds (an ephemeral node with its token); ipclock waits.
    PeerProcess peer({PeerPath(), server, "hold", path, std::string(44, 'P')});
    assert_true(absl::StartsWith(peer.ReadLine(), "locked"));
    Lock lock = LockOrFail(store, r);
    assert_false(TryOrFail(lock));
    peer.CloseStdin();
    assert_string_equal(peer.ReadLine().c_str(), "released");
    assert_int_equal(peer.Wait(), 0);
    ASSERT_OK(lock.Acquire(absl::Seconds(10)));
    // ipclock holds: an ephemeral node holding our token; the peer is out.
    assert_true(absl::StrContains(Peer(server, "stat", path), "ephemeral=1"));
    absl::StatusOr<absl::string_view> token = ipclock::internal::LockAccess::key(lock).Token();
    ASSERT_OK(token);
    assert_string_equal(Peer(server, "get", path).c_str(), std::string(*token).c_str());
    assert_int_equal(static_cast<int64_t>(*lock.fence()), CzxidOf(server, path));
    PeerProcess busy({PeerPath(), server, "hold", path, "x"});
    assert_string_equal(busy.ReadLine().c_str(), "busy");
    ASSERT_OK(lock.Release());
    assert_string_equal(Peer(server, "stat", path).c_str(), "nonode");
  }
  // Names ZooKeeper refuses are refused here, before the servers see them.
  Lock reserved = LockOrFail(store, "zookeeper");
  ASSERT_CODE(reserved.TryAcquire(), absl::StatusCode::kInvalidArgument);
  Lock control = LockOrFail(store, UniqueResource("ctl") + "\x01");
  ASSERT_CODE(control.TryAcquire(), absl::StatusCode::kInvalidArgument);
}


// `--hold DSN RESOURCE`: takes the lock (prints "locked" or "busy"), has the
// watch check it every 200 ms, and once it is lost prints "lost: <why>",
// releases it and prints "released: <status code>". Without CMocka.
int HoldForTests(const char* dsn, const char* resource) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) return 2;
  absl::StatusOr<Lock> lock = Lock::Create(*store, resource);
  if (!lock.ok() || !lock->TryAcquire().value_or(false)) {
    printf("busy\n");
    return 1;
  }
  LossLog losses;
  ipclock::LockWatch watch;
  absl::StatusOr<ipclock::WatchedLock> watched =
      watch.Watch(*std::move(lock), losses.Options(absl::Milliseconds(200)));
  if (!watched.ok()) return 3;
  printf("locked\n");
  fflush(stdout);
  while (losses.size() == 0) absl::SleepFor(absl::Milliseconds(10));
  printf("lost: %s\n", std::string(losses.first().status.message()).c_str());
  printf("released: %s\n", absl::StatusCodeToString(watched->Release().code()).c_str());
  fflush(stdout);
  return 0;
}

// `--write DSN RESOURCE FILE`: waits for the exclusive lock (up to 60 s),
// creates FILE, holds the lock 0.3 s more and releases it. Exit 0 when all
// of that went well. Without CMocka.
int WriteForTests(const char* dsn, const char* resource, const char* file) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) return 2;
  absl::StatusOr<Lock> lock = Lock::Create(*store, resource);
  if (!lock.ok() || !lock->Acquire(absl::Seconds(60)).ok()) return 3;
  FILE* f = fopen(file, "w");
  if (f == nullptr || fclose(f) != 0) return 4;
  absl::SleepFor(absl::Milliseconds(300));
  return lock->Release().ok() ? 0 : 5;
}

}  // namespace
}  // namespace ipclock_test

int main(int argc, char** argv) {
  using namespace ipclock_test;
  if (argc == 4 && strcmp(argv[1], "--hold") == 0) return HoldForTests(argv[2], argv[3]);
  if (argc == 5 && strcmp(argv[1], "--write") == 0) {
    return WriteForTests(argv[2], argv[3], argv[4]);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(NamesAndOrdering),
      cmocka_unit_test_teardown(DsnFormsAndBadInput, StopOwnServers),
      cmocka_unit_test_teardown(RecipeLayoutOnTheServer, StopOwnServers),
      cmocka_unit_test_teardown(FenceGrowsAcrossHoldersAndContainers, StopOwnServers),
      cmocka_unit_test_teardown(WaitersQueueInOrderWithoutHerd, StopOwnServers),
      cmocka_unit_test_teardown(SignalledWaiterLeavesTheQueue, StopOwnServers),
      cmocka_unit_test_teardown(SharedLocksFollowTheQueue, StopOwnServers),
      cmocka_unit_test_teardown(SymfonyPeerBothWays, StopOwnServers),
      cmocka_unit_test_teardown(DeletedNodeIsLossSeenByTheWatch, StopOwnServers),
      cmocka_unit_test_teardown(DisconnectShorterThanSessionIsNotLoss, StopOwnServers),
      cmocka_unit_test_teardown(SessionExpiryIsLoss, StopOwnServers),
      cmocka_unit_test_teardown(LostOnceTheSessionCanHaveExpired, StopOwnServers),
      cmocka_unit_test_teardown(UnreachableEnsembleIsUnavailable, StopOwnServers),
      cmocka_unit_test_teardown(KilledHolderIsListedThenReported, StopOwnServers),
      cmocka_unit_test(MultiOnAnExpiredSessionIsRefused),
      cmocka_unit_test(MultiWhoseFirstPathIsRefusedFreesNothingOfOurs),
      cmocka_unit_test_teardown(ForkedChildHasItsOwnSession, StopOwnServers),
      cmocka_unit_test_teardown(CliRunListAndLoss, StopOwnServers),
  };
  return cmocka_run_group_tests_name("zookeeper_store", tests, nullptr, nullptr);
}
