// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The combined store's own rules (the conformance suite runs over combined
// DSNs too): a majority survives a broken member, unanimity does not and
// leaves nothing behind, members are asked no further once the strategy
// cannot be met, partial acquisitions are given back, refreshes reach every
// member, capabilities are the members' intersection, and bad DSNs. With the
// Redis servers of tools/test-servers (tests/redis_fixture.h): members down
// at start, and a held lock losing its members one by one (a loss only once
// the strategy is no longer met, "cannot tell" while an unreachable member
// might still hold it), through CheckAcquired, Release and a LockWatch.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <initializer_list>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ipclock/stores/combined_store.h"
#include "ipclock/stores/in_memory_store.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "combined_store_test.h"
#include "forwarding_store.h"
#include "ipclock_config.h"
#if IPCLOCK_HAVE_REDIS
#include "ipclock/lock_watch.h"
#include "redis_fixture.h"  // last: it pulls in cmocka.h
#else
#include "test_util.h"  // last: it pulls in cmocka.h
#endif

namespace {

using ipclock::CombineStrategy;
using ipclock::Key;
using ipclock::Lock;
using ipclock::LockMode;
using ipclock::LockOptions;
using ipclock::Store;
using namespace ipclock_test;

// Makes `dir` unusable as a lock dir from now on: gone, and a plain file in
// its place, so that the flock store can neither use nor re-create it.
void BreakDir(const std::string& dir) {
  std::string cmd = absl::StrCat("rm -rf '", dir, "'");
  assert_int_equal(system(cmd.c_str()), 0);
  int fd = open(dir.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  assert_true(fd >= 0);
  close(fd);
}

// A member that counts the calls it gets, over an in-memory store.
class CountingStore final : public ipclock_test::ForwardingStore {
 public:
  CountingStore() : ForwardingStore("counting", ipclock::NewInMemoryStore()) {}
  absl::StatusOr<bool> Acquire(Key& key, LockMode mode, ipclock::Deadline d) override {
    ++saves;
    return ForwardingStore::Acquire(key, mode, d);
  }
  absl::Status Extend(Key& key, absl::Duration ttl) override {
    ++refreshes;
    return ipclock::StoreCalls::Extend(inner(), key, ttl);
  }

  std::atomic<int> saves{0};
  std::atomic<int> refreshes{0};
};

struct Counted {
  std::vector<std::shared_ptr<CountingStore>> members;
  std::shared_ptr<Store> combined;
};

Counted MakeCounted(int n, CombineStrategy strategy) {
  Counted c;
  std::vector<std::shared_ptr<Store>> members;
  for (int i = 0; i < n; ++i) {
    c.members.push_back(std::make_shared<CountingStore>());
    members.push_back(c.members.back());
  }
  absl::StatusOr<std::shared_ptr<Store>> combined =
      ipclock::NewCombinedStore(members, strategy);
  ASSERT_OK(combined);
  c.combined = *combined;
  return c;
}

// `resource` held directly on each of the members `taken`, as other
// processes would hold it there.
std::vector<Lock> HeldOnMembers(const Counted& c, const std::string& resource,
                                std::initializer_list<int> taken) {
  std::vector<Lock> held;
  for (int m : taken) held.push_back(HeldOrFail(c.members[m], resource));
  return held;
}

std::string FlockDsn(const std::string& dir) { return absl::StrCat("flock://", dir); }

// Three flock stores on dirs of their own, combined with `strategy`.
struct FlockTrio {
  std::string dir[3] = {MakeTempDir(), MakeTempDir(), MakeTempDir()};
  std::shared_ptr<Store> combined;
};

FlockTrio MakeFlockTrio(absl::string_view strategy) {
  FlockTrio t;
  t.combined = OpenStoreOrFail(absl::StrCat("combined:?strategy=", strategy, "&store1=",
                                            FlockDsn(t.dir[0]), "&store2=", FlockDsn(t.dir[1]),
                                            "&store3=", FlockDsn(t.dir[2])));
  return t;
}

// --- Failing members -----------------------------------------------------------

void MajorityAcquiresWithOneBrokenMember(void**) {
  FlockTrio t = MakeFlockTrio("consensus");
  BreakDir(t.dir[0]);
  std::string r = UniqueResource("majority");
  Lock lock = HeldOrFail(t.combined, r);
  assert_true(ipclock_test::IsStillHeld(lock));
  // The two working members really hold it...
  auto s2 = OpenStoreOrFail(FlockDsn(t.dir[1])), s3 = OpenStoreOrFail(FlockDsn(t.dir[2]));
  assert_false(IsFree(s2, r));
  assert_false(IsFree(s3, r));
  // ...and a rival through the combined store sees contention, not an
  // error: one broken member out of three does not decide anything.
  Lock rival = LockOrFail(t.combined, r);
  absl::StatusOr<bool> got = rival.TryAcquire();
  ASSERT_OK(got);
  assert_false(*got);
  ASSERT_OK(lock.Release());
  assert_true(IsFree(s2, r));
  assert_true(IsFree(s3, r));
}

void UnanimousFailsWithOneBrokenMemberAndHoldsNothing(void**) {
  FlockTrio t = MakeFlockTrio("unanimous");
  BreakDir(t.dir[1]);
  std::string r = UniqueResource("unanimous");
  Lock lock = LockOrFail(t.combined, r);
  absl::StatusOr<bool> got = lock.TryAcquire();
  // An error, not contention: the broken member alone rules it out.
  assert_false(got.ok());
  assert_false(lock.is_acquired());
  assert_true(std::string(got.status().message()).find(t.dir[1]) != std::string::npos);
  assert_true(IsFree(OpenStoreOrFail(FlockDsn(t.dir[0])), r));  // given back
  assert_true(IsFree(OpenStoreOrFail(FlockDsn(t.dir[2])), r));  // never asked
  // A wait ends at once with the same error instead of waiting it out.
  double t0 = NowSeconds();
  assert_false(lock.Acquire(absl::Seconds(20)).ok());
  assert_true(NowSeconds() - t0 < 10);
}

// --- Early stop and partial release ---------------------------------------------

void StopsOnceTheStrategyCannotBeMet(void**) {
  std::string r = UniqueResource("early");
  {
    Counted c = MakeCounted(3, CombineStrategy::kConsensus);
    std::vector<Lock> others = HeldOnMembers(c, r, {0, 1});
    Lock lock = LockOrFail(c.combined, r);
    assert_false(TryOrFail(lock));
    assert_int_equal(c.members[0]->saves.load(), 2);  // the other holder and the combined try
    assert_int_equal(c.members[1]->saves.load(), 2);
    assert_int_equal(c.members[2]->saves.load(), 0);  // two refusals of three decide
  }
  {
    Counted c = MakeCounted(3, CombineStrategy::kUnanimous);
    std::vector<Lock> others = HeldOnMembers(c, r, {0});
    Lock lock = LockOrFail(c.combined, r);
    assert_false(TryOrFail(lock));
    assert_int_equal(c.members[1]->saves.load(), 0);
    assert_int_equal(c.members[2]->saves.load(), 0);
  }
  {
    // Met after two members, but the third is still asked: the more members
    // hold the lock, the more of them may fail later.
    Counted c = MakeCounted(3, CombineStrategy::kConsensus);
    Lock lock = HeldOrFail(c.combined, r);
    for (auto& m : c.members) assert_int_equal(m->saves.load(), 1);
  }
}

void FailedAttemptGivesBackWhatItTook(void**) {
  std::string r = UniqueResource("partial");
  Counted c = MakeCounted(3, CombineStrategy::kConsensus);
  std::vector<Lock> others = HeldOnMembers(c, r, {1, 2});
  Lock lock = LockOrFail(c.combined, r);
  assert_false(TryOrFail(lock));  // member 1 said yes, members 2 and 3 no
  assert_true(IsFree(c.members[0], r));
  // The same after a timed wait that polled many times.
  ASSERT_CODE(lock.Acquire(absl::Milliseconds(200)), absl::StatusCode::kDeadlineExceeded);
  assert_true(c.members[0]->saves.load() > 2);
  assert_true(IsFree(c.members[0], r));
  // Once a majority is free, the waiter gets it.
  ASSERT_OK(others[0].Release());  // member 2 is free again
  ASSERT_OK(lock.Acquire(absl::Seconds(5)));
  assert_false(IsFree(c.members[0], r));
  assert_false(IsFree(c.members[1], r));
}

void WaiterGetsTheLockWhenReleased(void**) {
  std::string r = UniqueResource("poll");
  Counted c = MakeCounted(3, CombineStrategy::kConsensus);
  Lock holder = HeldOrFail(c.combined, r);
  std::atomic<int> result{-1};
  std::thread waiter([&] {
    absl::StatusOr<Lock> lock = Lock::Create(c.combined, r);
    if (!lock.ok()) return;
    result = lock->Acquire(absl::Seconds(20)).ok() ? 1 : 0;
  });
  absl::SleepFor(absl::Milliseconds(150));
  assert_int_equal(result.load(), -1);  // still waiting
  ASSERT_OK(holder.Release());
  waiter.join();
  assert_int_equal(result.load(), 1);
}

// --- Leases -----------------------------------------------------------------------

void RefreshReachesEveryMember(void**) {
  std::string r = UniqueResource("refresh");
  Counted c = MakeCounted(3, CombineStrategy::kConsensus);
  LockOptions options;
  options.ttl = absl::Seconds(30);
  Lock lock = HeldOrFail(c.combined, r, options);
  ASSERT_OK(lock.Refresh());
  for (auto& m : c.members) assert_int_equal(m->refreshes.load(), 1);
  // One member loses the key: a majority still refreshes.
  ASSERT_OK(ipclock::StoreCalls::Release(*c.members[2], ipclock::internal::LockAccess::key(lock)));
  ASSERT_OK(lock.Refresh());
  // Still asked: a member whose refresh failed may be back next time.
  assert_int_equal(c.members[2]->refreshes.load(), 2);
  // A second one: the lock is no lock anymore, and is given up everywhere.
  ASSERT_OK(ipclock::StoreCalls::Release(*c.members[1], ipclock::internal::LockAccess::key(lock)));
  ASSERT_CODE(lock.Refresh(), absl::StatusCode::kAborted);
  for (auto& m : c.members) assert_true(IsFree(m, r));
}

// --- Redis members (servers from tools/test-servers) -------------------------------

#if IPCLOCK_HAVE_REDIS

void MemberDownAtStartCountsAsRefusing(void**) {
  const std::string a = RequireRedis("IPCLOCK_TEST_REDIS");
  const std::string b = RequireRedis("IPCLOCK_TEST_REDIS_2");
  const std::string dead = "redis://127.0.0.1:1";  // nothing listens there
  if (ipclock::StoreFromDsn(dead).status().code() != absl::StatusCode::kUnavailable) skip();
  // Two of three up meet a majority: the store is built, the dead member is
  // retried on use, and locks work.
  auto store = OpenStoreOrFail(absl::StrCat("combined:?store1=", a, "&store2=", dead,
                                    "&store3=", b));
  assert_true(store->Describe().find("down at start") != std::string::npos);
  std::string r = UniqueResource("down");
  Lock lock = HeldOrFail(store, r);
  Lock rival = LockOrFail(store, r);
  assert_false(TryOrFail(rival));
  ASSERT_OK(lock.Release());
  assert_true(TryOrFail(rival));
  // Unanimity, or a majority of dead members, cannot be met: the server's
  // error at once.
  ASSERT_CODE(ipclock::StoreFromDsn(absl::StrCat("combined:?strategy=unanimous&store1=", a,
                                                 "&store2=", dead)),
              absl::StatusCode::kUnavailable);
  ASSERT_CODE(ipclock::StoreFromDsn(absl::StrCat("combined:?store1=", a, "&store2=", dead,
                                                 "&store3=redis://127.0.0.1:2")),
              absl::StatusCode::kUnavailable);
}

// Three Redis servers under a majority, as Redlock sets them up.
struct RedisTrio {
  std::vector<std::string> dsns;
  std::shared_ptr<Store> combined;
};

RedisTrio MakeTrio(std::vector<std::string> dsns) {
  RedisTrio trio;
  std::vector<std::shared_ptr<Store>> members;
  for (const std::string& d : dsns) {
    members.push_back(
        OpenStoreOrFail(WithOptions(d, "secret=none&connect_timeout=0.5&command_timeout=1")));
  }
  absl::StatusOr<std::shared_ptr<Store>> combined =
      ipclock::NewCombinedStore(members, CombineStrategy::kConsensus);
  ASSERT_OK(combined);
  trio.dsns = std::move(dsns);
  trio.combined = *combined;
  return trio;
}

// The trio of the three test servers (skips, or fails under CI=true,
// without them).
RedisTrio TestServersTrio() {
  return MakeTrio({RequireRedis("IPCLOCK_TEST_REDIS"), RequireRedis("IPCLOCK_TEST_REDIS_2"),
                   RequireRedis("IPCLOCK_TEST_REDIS_3")});
}

void DeleteOn(const std::string& dsn, const std::string& key) { RedisClient(dsn).Ok({"DEL", key}); }

// A lock on a fresh resource named after `tag`, held through the trio;
// then its key is deleted on each member of `lost_on`.
Lock HeldThenDeletedOn(const RedisTrio& trio, const char* tag,
                       const std::vector<std::string>& lost_on) {
  Lock lock = MakeHeldLock(trio.combined, UniqueResource(tag), absl::Seconds(60));
  for (const std::string& dsn : lost_on) DeleteOn(dsn, lock.resource());
  return lock;
}

void MajorityOfRedisMembersLosesTheLock(void**) {
  RedisTrio trio = TestServersTrio();
  const std::string &a = trio.dsns[0], &b = trio.dsns[1], &c = trio.dsns[2];
  // One member loses its key: two of three still hold, the lock is held,
  // and its release is clean.
  {
    Lock lock = HeldThenDeletedOn(trio, "trio-one", {a});
    ASSERT_OK(lock.CheckAcquired());
    ASSERT_OK(lock.Release());
  }
  // Two lose it: lost, naming both.
  {
    Lock lock = HeldThenDeletedOn(trio, "trio-two", {a, b});
    const std::string r = lock.resource();
    absl::Status s = lock.CheckAcquired();
    print_message("%s\n", s.ToString().c_str());
    ASSERT_CODE(s, absl::StatusCode::kAborted);
    // Member 3 still holds; the loss may be told before it answered.
    assert_true(Contains(s, "1 of 3 members hold it") ||
                (Contains(s, "0 of 3 members are known to hold it") &&
                 Contains(s, absl::StrCat("no answer yet from: ", c))));
    assert_true(Contains(s, a.substr(strlen("redis://"))));
    assert_true(Contains(s, b.substr(strlen("redis://"))));
    // CheckAcquired let go of member 3's part too: the next holder gets it.
    Lock rival = MakeHeldLock(trio.combined, r, absl::Seconds(60));
  }
  // Released after two lost it: never OK.
  {
    Lock lock = HeldThenDeletedOn(trio, "trio-release", {a, c});
    absl::Status s = lock.Release();
    print_message("%s\n", s.ToString().c_str());
    ASSERT_CODE(s, absl::StatusCode::kAborted);
    assert_true(Contains(s, "the lock was no longer held at release"));
  }
  // Watched: the first member's loss is no loss; the second one's is, and
  // is reported within the interval.
  {
    const std::string r = UniqueResource("trio-watch");
    Lock lock = MakeHeldLock(trio.combined, r, absl::Seconds(60));
    std::atomic<int> reports{0};
    std::atomic<int64_t> reported_at{0};
    ipclock::WatchOptions options;
    options.check_interval = absl::Milliseconds(250);
    options.diagnostics = [&](const ipclock::Diagnostic&) {
      reported_at = ipclock::Deadline::NowNanos();
      ++reports;
    };
    ipclock::LockWatch watch;
    absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(lock), options);
    ASSERT_OK(watched);
    DeleteOn(b, r);
    absl::SleepFor(absl::Seconds(1));
    assert_int_equal(reports.load(), 0);
    const int64_t lost_at = ipclock::Deadline::NowNanos();
    DeleteOn(c, r);
    const double until = NowSeconds() + 30;
    while (reports.load() == 0 && NowSeconds() < until) absl::SleepFor(absl::Milliseconds(5));
    assert_int_equal(reports.load(), 1);
    print_message("latency: combined, second of three members lost: reported %.1f ms later "
                  "(interval 250 ms)\n",
                  static_cast<double>(reported_at.load() - lost_at) / 1e6);
    ASSERT_CODE(watched->Release(), absl::StatusCode::kAborted);
  }
}

// A member that cannot be asked might still hold its part: until the
// members that surely lost theirs rule the strategy out, the combined lock
// is not declared lost.
void UnreachableMemberIsNotALoss(void**) {
  const std::string a = RequireRedis("IPCLOCK_TEST_REDIS");
  const std::string b = RequireRedis("IPCLOCK_TEST_REDIS_2");
  RedisServer& own = OwnRedis();
  RedisTrio trio = MakeTrio({own.dsn(), a, b});
  const std::string r = UniqueResource("trio-down");
  Lock lock = MakeHeldLock(trio.combined, r, absl::Seconds(60));
  own.Kill();
  ASSERT_OK(lock.CheckAcquired());  // two of three answer yes
  DeleteOn(a, r);
  absl::Status s = lock.CheckAcquired();
  print_message("%s\n", s.ToString().c_str());
  ASSERT_CODE(s, absl::StatusCode::kUnavailable);
  assert_true(Contains(s, "cannot tell"));
  assert_true(lock.is_acquired());
  DeleteOn(b, r);
  ASSERT_CODE(lock.CheckAcquired(), absl::StatusCode::kAborted);
}

// A key handed over with Serialize() has no combined state in the process
// that takes it: every member may hold it, and is asked.
void SerializedKeyIsCheckedOnEveryMember(void**) {
  RedisTrio trio = TestServersTrio();
  const std::string &a = trio.dsns[0], &b = trio.dsns[1];
  const std::string r = UniqueResource("trio-serial");
  Lock lock = MakeHeldLock(trio.combined, r, absl::Seconds(60));
  absl::StatusOr<std::string> text = lock.Serialize();
  ASSERT_OK(text);
  LockOptions options;
  options.ttl = absl::Seconds(60);
  options.auto_release = false;
  absl::StatusOr<Lock> adopted = Lock::FromSerialized(trio.combined, *text, options);
  ASSERT_OK(adopted);
  ASSERT_OK(adopted->CheckAcquired());
  ASSERT_OK(adopted->Refresh());
  DeleteOn(a, r);
  DeleteOn(b, r);
  ASSERT_CODE(adopted->CheckAcquired(), absl::StatusCode::kAborted);
}

#endif  // IPCLOCK_HAVE_REDIS

// --- Capabilities and DSNs ----------------------------------------------------------

void CapabilitiesAreTheIntersection(void**) {
  std::string d = MakeTempDir();
  auto mixed = OpenStoreOrFail(absl::StrCat("combined:?store1=in-memory&store2=",
                                    FlockDsn(d), "&store3=in-memory"));
  ipclock::Capabilities c = mixed->capabilities();
  assert_false(c.blocking);
  assert_true(c.expiring);  // in-memory leases
  assert_true(c.shared);
  assert_false(c.serializable);
  assert_false(c.fencing);
  assert_false(c.counting);
  assert_false(c.owner_death);  // never declared: reports are not exact
  assert_int_equal(static_cast<int>(c.scope), static_cast<int>(ipclock::Scope::kProcess));
  auto flocks = OpenStoreOrFail(absl::StrCat("combined:?strategy=unanimous&store1=",
                                     FlockDsn(d), "/a&store2=", FlockDsn(d), "/b"));
  c = flocks->capabilities();
  assert_false(c.expiring);
  assert_false(c.owner_death);
  assert_int_equal(static_cast<int>(c.scope), static_cast<int>(ipclock::Scope::kLocal));
  assert_true(flocks->Describe().find("unanimous") != std::string::npos);
}

void MemberOptionsArePercentDecoded(void**) {
  std::string d = MakeTempDir();
  // The member's own '&' is written %26.
  auto store = OpenStoreOrFail(absl::StrCat("combined:?store1=", FlockDsn(d),
                                    "/x?record=false%26file_mode=0644"));
  assert_false(store->capabilities().fencing);
  Lock lock = HeldOrFail(store, UniqueResource("decoded"));
}

void BadDsnsAndMembers(void**) {
  auto code = [](const std::string& dsn) {
    return ipclock::StoreFromDsn(dsn).status().code();
  };
  const auto kBad = absl::StatusCode::kInvalidArgument;
  assert_int_equal(code("combined"), kBad);  // no members
  assert_int_equal(code("combined:?strategy=most&store1=in-memory"), kBad);
  assert_int_equal(code("combined:?store1=in-memory&store3=in-memory"), kBad);
  assert_int_equal(code("combined:?store1=in-memory&colour=red"), kBad);
  assert_int_equal(code("combined://host/?store1=in-memory"), kBad);
  assert_int_equal(code("combined:?store1=nosuchstore"), kBad);
  // A member's error names the member.
  absl::Status s = ipclock::StoreFromDsn("combined:?store1=in-memory&store2=flock://relative").status();
  assert_int_equal(s.code(), kBad);
  assert_true(std::string(s.message()).find("store2") != std::string::npos);
  // A store object appears once, or its per-key state would be shared.
  auto mem = ipclock::NewInMemoryStore();
  ASSERT_CODE(ipclock::NewCombinedStore({mem, mem}, CombineStrategy::kConsensus), kBad);
  ASSERT_CODE(ipclock::NewCombinedStore({}, CombineStrategy::kConsensus), kBad);
  ASSERT_CODE(ipclock::NewCombinedStore({mem, nullptr}, CombineStrategy::kConsensus), kBad);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(MajorityAcquiresWithOneBrokenMember),
      cmocka_unit_test(UnanimousFailsWithOneBrokenMemberAndHoldsNothing),
      cmocka_unit_test(StopsOnceTheStrategyCannotBeMet),
      cmocka_unit_test(FailedAttemptGivesBackWhatItTook),
      cmocka_unit_test(WaiterGetsTheLockWhenReleased),
      cmocka_unit_test(RefreshReachesEveryMember),
#if IPCLOCK_HAVE_REDIS
      cmocka_unit_test(MemberDownAtStartCountsAsRefusing),
      cmocka_unit_test(MajorityOfRedisMembersLosesTheLock),
      cmocka_unit_test(UnreachableMemberIsNotALoss),
      cmocka_unit_test(FrozenMemberHoldsUpNoLoss),
      cmocka_unit_test(SerializedKeyIsCheckedOnEveryMember),
#endif
      cmocka_unit_test(CapabilitiesAreTheIntersection),
      cmocka_unit_test(MemberOptionsArePercentDecoded),
      cmocka_unit_test(BadDsnsAndMembers),
  };
#if IPCLOCK_HAVE_REDIS
  return cmocka_run_group_tests_name("combined_store", tests, nullptr, KillOwnRedis);
#else
  return cmocka_run_group_tests_name("combined_store", tests, nullptr, nullptr);
#endif
}
