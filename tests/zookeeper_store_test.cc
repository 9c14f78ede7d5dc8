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
// as a loss, `ipclock list`, and `ipclock run` end to end.
//
// Skipped without the server (failed under CI=true).

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
#include "stores/zookeeper_multi.h"
#include "stores/zookeeper_names.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

using ipclock::Lock;
using ipclock::LockMode;
using ipclock::Store;

#define REQUIRE_SERVER() \
  RequireEnv("IPCLOCK_TEST_ZOOKEEPER", "tools/test-servers/zookeeper.sh starts one")

std::string Server() {
  return absl::StrCat("127.0.0.1:", DsnPort(EnvOrNull("IPCLOCK_TEST_ZOOKEEPER")));
}

// The recipe under /ipclock-test, sessions of 2 s.
std::string RecipeDsn(const std::string& extra = "") {
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
  ipclock::ListRequest request;
  request.resource = resource;
  absl::StatusOr<ipclock::HeldLocks> held = ipclock::ListHeldLocks(dsn, request);
  if (!held.ok() || held->locks.empty()) {
    fail_msg("no node listed for %s: %s", resource.c_str(), held.status().ToString().c_str());
  }
  return held->locks[0].object;
}

// --- A ZooKeeper server of our own ------------------------------------------------

class OwnZooKeeper : public ScriptedServer {
 public:
  OwnZooKeeper()
      : ScriptedServer({"zookeeper-server", "ZooKeeper", "zk.pid",
                        "no java or ZooKeeper jars (apt-get install zookeeperd)", 93, 1, {}, 2,
                        60}) {}
  std::string server() const { return absl::StrCat("127.0.0.1:", port()); }
  std::string dsn(const std::string& query) const {
    return absl::StrCat("zookeeper://", server(), "/ipclock-own?secret=none&", query);
  }
};

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
    Lock lock = LockOrFail(store, UniqueResource("dsn"));
    assert_true(TryOrFail(lock));
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
}

// --- The recipe on the server ---------------------------------------------------------------

void RecipeLayoutOnTheServer(void**) {
  REQUIRE_SERVER();
  const std::string server = Server();
  auto store = OpenStoreOrFail(RecipeDsn());
  const std::string r = UniqueResource("lay/out x");
  const std::string parent = absl::StrCat("/ipclock-test/", ipclock::EncodeResourceNode(r));
  Lock writer = LockOrFail(store, r);
  assert_true(TryOrFail(writer));
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
  Lock reader = LockOrFail(store, r);
  assert_true(TryOrFail(reader, LockMode::kShared));
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
  Lock holder = LockOrFail(store, r);
  assert_true(TryOrFail(holder));
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

void SharedLocksFollowTheQueue(void**) {
  REQUIRE_SERVER();
  const std::string dsn = RecipeDsn();
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("rw");
  Lock r1 = LockOrFail(store, r), r2 = LockOrFail(store, r);
  assert_true(TryOrFail(r1, LockMode::kShared));
  assert_true(TryOrFail(r2, LockMode::kShared));
  const std::string written = MakeTempDir() + "/written";
  pid_t writer = Spawn({IpclockPath(), "run", "--store", dsn, "--key", r, "--", "sh", "-c",
                        absl::StrCat("touch ", written, "; sleep 0.3")});
  const std::string parent = absl::StrCat("/ipclock-test/", ipclock::EncodeResourceNode(r));
  const double t0 = NowSeconds();
  while (Lines(Peer(Server(), "ls", parent)).size() < 3 && NowSeconds() - t0 < 20) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  // A reader that comes after a queued writer waits for it (no writer
  // starvation), although only readers hold the lock.
  Lock late = LockOrFail(store, r);
  assert_false(TryOrFail(late, LockMode::kShared));
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

// --- Losses ------------------------------------------------------------------------------------

void DeletedNodeIsLossSeenByTheWatch(void**) {
  REQUIRE_SERVER();
  for (const std::string& dsn : {RecipeDsn(), SymfonyDsn()}) {
    auto store = OpenStoreOrFail(dsn);
    const std::string r = UniqueResource("deleted");
    Lock lock = LockOrFail(store, r);
    assert_true(TryOrFail(lock));
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
  Lock lock = LockOrFail(store, UniqueResource("blip"));
  assert_true(TryOrFail(lock));
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

void SessionExpiryIsLoss(void**) {
  REQUIRE_SERVER();
  // The holder is a process that stops (as in a long GC pause or a frozen
  // VM) for longer than its session timeout, while the servers run on.
  const std::string dsn = RecipeDsn();
  auto store = OpenStoreOrFail(dsn);
  const std::string r = UniqueResource("expiry");
  PeerProcess holder(HolderArgv(dsn, r));
  assert_string_equal(holder.ReadLine().c_str(), "locked");
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
  Lock lock = LockOrFail(store, UniqueResource("unreachable"));
  assert_true(TryOrFail(lock));
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
  PeerProcess holder(HolderArgv(dsn, r));
  assert_string_equal(holder.ReadLine().c_str(), "locked");
  ipclock::ListRequest request;
  request.resource = r;
  absl::StatusOr<ipclock::HeldLocks> held = ipclock::ListHeldLocks(dsn, request);
  ASSERT_OK(held);
  assert_int_equal(held->locks.size(), 1);
  assert_string_equal(held->locks[0].resource.c_str(), r.c_str());
  assert_string_equal(held->locks[0].mode.c_str(), "exclusive");
  assert_int_equal(held->locks[0].pid, holder.pid());
  assert_true(held->locks[0].fence.has_value());
  kill(holder.pid(), SIGKILL);
  assert_int_equal(holder.Wait(), 128 + SIGKILL);
  // Once the servers expire its session, the owner record it left says so.
  const double t0 = NowSeconds();
  std::string mode;
  while (NowSeconds() - t0 < 20) {
    held = ipclock::ListHeldLocks(dsn, request);
    ASSERT_OK(held);
    mode = held->locks.empty() ? "" : held->locks[0].mode;
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
  Lock holder = LockOrFail(store, r);
  assert_true(TryOrFail(holder));
  RunForOutput({cli, "run", "-n", "--store", dsn, "--key", r, "--", "true"}, &code);
  assert_int_equal(code, 1);
  // `ipclock list` reads the node.
  out = RunForOutput({cli, "list", "--json", "--store", dsn, "--key", r}, &code);
  assert_int_equal(code, 0);
  assert_true(absl::StrContains(out, absl::StrCat("\"resource\":\"", r, "\"")));
  assert_true(absl::StrContains(out, absl::StrCat("\"pid\":", getpid())));
  ASSERT_OK(holder.Release());
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
  std::atomic<int> lost{0};
  std::string why;  // written once, before `lost`
  ipclock::LockWatch watch;
  ipclock::WatchOptions options;
  options.check_interval = absl::Milliseconds(200);
  options.diagnostics = [&](const ipclock::Diagnostic& loss) {
    why = std::string(loss.status.message());
    lost = 1;
  };
  absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(*std::move(lock), options);
  if (!watched.ok()) return 3;
  printf("locked\n");
  fflush(stdout);
  while (lost.load() == 0) absl::SleepFor(absl::Milliseconds(10));
  printf("lost: %s\n", why.c_str());
  printf("released: %s\n", absl::StatusCodeToString(watched->Release().code()).c_str());
  fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace ipclock_test

int main(int argc, char** argv) {
  using namespace ipclock_test;
  if (argc == 4 && strcmp(argv[1], "--hold") == 0) return HoldForTests(argv[2], argv[3]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(NamesAndOrdering),
      cmocka_unit_test_teardown(DsnFormsAndBadInput, StopOwnServers),
      cmocka_unit_test_teardown(RecipeLayoutOnTheServer, StopOwnServers),
      cmocka_unit_test_teardown(FenceGrowsAcrossHoldersAndContainers, StopOwnServers),
      cmocka_unit_test_teardown(WaitersQueueInOrderWithoutHerd, StopOwnServers),
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
