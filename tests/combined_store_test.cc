// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The combined store's own rules (the conformance suite runs over combined
// DSNs too): a majority survives a broken member, unanimity does not and
// leaves nothing behind, members are asked no further once the strategy
// cannot be met, partial acquisitions are given back, refreshes reach every
// member, capabilities are the members' intersection, and bad DSNs.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ipclock/combined_store.h"
#include "ipclock/in_memory_store.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/store_interface.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::CombineStrategy;
using ipclock::Key;
using ipclock::Lock;
using ipclock::LockMode;
using ipclock::LockOptions;
using ipclock::Store;
using namespace ipclock_test;

std::shared_ptr<Store> FromDsn(const std::string& dsn) {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) fail_msg("StoreFromDsn(%s): %s", dsn.c_str(), store.status().ToString().c_str());
  return *store;
}

// Whether `resource` is free in `store` right now (takes and gives it back).
bool IsFree(const std::shared_ptr<Store>& store, const std::string& resource) {
  Lock probe = LockOrFail(store, resource);
  bool got = TryOrFail(probe);
  if (got) ASSERT_OK(probe.Release());
  return got;
}

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
class CountingStore final : public Store {
 public:
  CountingStore() : inner_(ipclock::NewInMemoryStore()) {}
  absl::string_view name() const override { return "counting"; }
  ipclock::Capabilities capabilities() const override { return inner_->capabilities(); }
  absl::StatusOr<bool> Save(Key& key, LockMode mode, ipclock::Deadline d) override {
    ++saves;
    return ipclock::StoreCalls::Save(*inner_, key, mode, d);
  }
  absl::Status PutOffExpiration(Key& key, absl::Duration ttl) override {
    ++refreshes;
    return ipclock::StoreCalls::PutOffExpiration(*inner_, key, ttl);
  }
  absl::Status Delete(Key& key) override { return ipclock::StoreCalls::Delete(*inner_, key); }
  absl::StatusOr<bool> Exists(Key& key) override { return ipclock::StoreCalls::Exists(*inner_, key); }

  std::atomic<int> saves{0};
  std::atomic<int> refreshes{0};

 private:
  std::shared_ptr<Store> inner_;
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

std::string FlockDsn(const std::string& dir) { return absl::StrCat("flock://", dir); }

// --- Failing members -----------------------------------------------------------

void MajorityAcquiresWithOneBrokenMember(void**) {
  std::string d1 = MakeTempDir(), d2 = MakeTempDir(), d3 = MakeTempDir();
  auto combined = FromDsn(absl::StrCat("combined:?strategy=consensus&store1=",
                                       FlockDsn(d1), "&store2=", FlockDsn(d2),
                                       "&store3=", FlockDsn(d3)));
  BreakDir(d1);
  std::string r = UniqueResource("majority");
  Lock lock = LockOrFail(combined, r);
  assert_true(TryOrFail(lock));
  assert_true(ipclock_test::IsStillHeld(lock));
  // The two working members really hold it...
  auto s2 = FromDsn(FlockDsn(d2)), s3 = FromDsn(FlockDsn(d3));
  assert_false(IsFree(s2, r));
  assert_false(IsFree(s3, r));
  // ...and a rival through the combined store sees contention, not an
  // error: one broken member out of three does not decide anything.
  Lock rival = LockOrFail(combined, r);
  absl::StatusOr<bool> got = rival.TryAcquire();
  ASSERT_OK(got);
  assert_false(*got);
  ASSERT_OK(lock.Release());
  assert_true(IsFree(s2, r));
  assert_true(IsFree(s3, r));
}

void UnanimousFailsWithOneBrokenMemberAndHoldsNothing(void**) {
  std::string d1 = MakeTempDir(), d2 = MakeTempDir(), d3 = MakeTempDir();
  auto combined = FromDsn(absl::StrCat("combined:?strategy=unanimous&store1=",
                                       FlockDsn(d1), "&store2=", FlockDsn(d2),
                                       "&store3=", FlockDsn(d3)));
  BreakDir(d2);
  std::string r = UniqueResource("unanimous");
  Lock lock = LockOrFail(combined, r);
  absl::StatusOr<bool> got = lock.TryAcquire();
  // An error, not contention: the broken member alone rules it out.
  assert_false(got.ok());
  assert_false(lock.is_acquired());
  assert_true(std::string(got.status().message()).find(d2) != std::string::npos);
  assert_true(IsFree(FromDsn(FlockDsn(d1)), r));  // given back
  assert_true(IsFree(FromDsn(FlockDsn(d3)), r));  // never asked
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
    Lock h1 = LockOrFail(c.members[0], r), h2 = LockOrFail(c.members[1], r);
    assert_true(TryOrFail(h1));
    assert_true(TryOrFail(h2));
    Lock lock = LockOrFail(c.combined, r);
    assert_false(TryOrFail(lock));
    assert_int_equal(c.members[0]->saves.load(), 2);  // h1 and the combined try
    assert_int_equal(c.members[1]->saves.load(), 2);
    assert_int_equal(c.members[2]->saves.load(), 0);  // two refusals of three decide
  }
  {
    Counted c = MakeCounted(3, CombineStrategy::kUnanimous);
    Lock h1 = LockOrFail(c.members[0], r);
    assert_true(TryOrFail(h1));
    Lock lock = LockOrFail(c.combined, r);
    assert_false(TryOrFail(lock));
    assert_int_equal(c.members[1]->saves.load(), 0);
    assert_int_equal(c.members[2]->saves.load(), 0);
  }
  {
    // Met after two members, but the third is still asked: the more members
    // hold the lock, the more of them may fail later.
    Counted c = MakeCounted(3, CombineStrategy::kConsensus);
    Lock lock = LockOrFail(c.combined, r);
    assert_true(TryOrFail(lock));
    for (auto& m : c.members) assert_int_equal(m->saves.load(), 1);
  }
}

void FailedAttemptGivesBackWhatItTook(void**) {
  std::string r = UniqueResource("partial");
  Counted c = MakeCounted(3, CombineStrategy::kConsensus);
  Lock h2 = LockOrFail(c.members[1], r), h3 = LockOrFail(c.members[2], r);
  assert_true(TryOrFail(h2));
  assert_true(TryOrFail(h3));
  Lock lock = LockOrFail(c.combined, r);
  assert_false(TryOrFail(lock));  // member 1 said yes, members 2 and 3 no
  assert_true(IsFree(c.members[0], r));
  // The same after a timed wait that polled many times.
  ASSERT_CODE(lock.Acquire(absl::Milliseconds(200)), absl::StatusCode::kDeadlineExceeded);
  assert_true(c.members[0]->saves.load() > 2);
  assert_true(IsFree(c.members[0], r));
  // Once a majority is free, the waiter gets it.
  ASSERT_OK(h2.Release());
  ASSERT_OK(lock.Acquire(absl::Seconds(5)));
  assert_false(IsFree(c.members[0], r));
  assert_false(IsFree(c.members[1], r));
}

void WaiterGetsTheLockWhenReleased(void**) {
  std::string r = UniqueResource("poll");
  Counted c = MakeCounted(3, CombineStrategy::kConsensus);
  Lock holder = LockOrFail(c.combined, r);
  assert_true(TryOrFail(holder));
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
  Lock lock = LockOrFail(c.combined, r, options);
  assert_true(TryOrFail(lock));
  ASSERT_OK(lock.Refresh());
  for (auto& m : c.members) assert_int_equal(m->refreshes.load(), 1);
  // One member loses the key: a majority still refreshes.
  ASSERT_OK(ipclock::StoreCalls::Delete(*c.members[2], ipclock::internal::LockAccess::key(lock)));
  ASSERT_OK(lock.Refresh());
  // Still asked: a member whose refresh failed may be back next time.
  assert_int_equal(c.members[2]->refreshes.load(), 2);
  // A second one: the lock is no lock anymore, and is given up everywhere.
  ASSERT_OK(ipclock::StoreCalls::Delete(*c.members[1], ipclock::internal::LockAccess::key(lock)));
  ASSERT_CODE(lock.Refresh(), absl::StatusCode::kAborted);
  for (auto& m : c.members) assert_true(IsFree(m, r));
}

// --- Members down at start (Redis servers from tools/test-servers) ---------------

// $name, or a skip (a failure under CI=true) when the test servers are not
// running. Call before any object is made.
std::string ServerOrSkip(const char* name) {
  const char* value = getenv(name);
  if (value != nullptr && value[0] != '\0') return value;
  const char* ci = getenv("CI");
  if (ci != nullptr && std::string(ci) == "true") fail_msg("$%s is not set under CI=true", name);
  skip();
  return "";
}

void MemberDownAtStartCountsAsRefusing(void**) {
  const std::string a = ServerOrSkip("IPCLOCK_TEST_REDIS");
  const std::string b = ServerOrSkip("IPCLOCK_TEST_REDIS_2");
  const std::string dead = "redis://127.0.0.1:1";  // nothing listens there
  if (ipclock::StoreFromDsn(dead).status().code() != absl::StatusCode::kUnavailable) skip();
  // Two of three up meet a majority: the store is built, the dead member is
  // retried on use, and locks work.
  auto store = FromDsn(absl::StrCat("combined:?store1=", a, "&store2=", dead,
                                    "&store3=", b));
  assert_true(store->Describe().find("down at start") != std::string::npos);
  std::string r = UniqueResource("down");
  Lock lock = LockOrFail(store, r);
  assert_true(TryOrFail(lock));
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

// --- Capabilities and DSNs ----------------------------------------------------------

void CapabilitiesAreTheIntersection(void**) {
  std::string d = MakeTempDir();
  auto mixed = FromDsn(absl::StrCat("combined:?store1=in-memory&store2=",
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
  auto flocks = FromDsn(absl::StrCat("combined:?strategy=unanimous&store1=",
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
  auto store = FromDsn(absl::StrCat("combined:?store1=", FlockDsn(d),
                                    "/x?record=false%26file_mode=0644"));
  assert_false(store->capabilities().fencing);
  Lock lock = LockOrFail(store, UniqueResource("decoded"));
  assert_true(TryOrFail(lock));
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
      cmocka_unit_test(MemberDownAtStartCountsAsRefusing),
      cmocka_unit_test(CapabilitiesAreTheIntersection),
      cmocka_unit_test(MemberOptionsArePercentDecoded),
      cmocka_unit_test(BadDsnsAndMembers),
  };
  return cmocka_run_group_tests_name("combined_store", tests, nullptr, nullptr);
}
