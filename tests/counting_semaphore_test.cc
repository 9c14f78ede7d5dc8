// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Counting semaphores, one set of tests for every store that has them: the
// SysV semaphore store's kernel count, and slot locks over every other
// store (ipclock/stores/slot_semaphore_store.h). One binary, run once per
// store DSN given as argv[1] ("{tmpdir}", "{shm}" and "{env:NAME}" expand
// as in the conformance suite); "storm" as argv[2] adds the kill -9 storm,
// for the local stores.
//
// Holders are forked processes: a permit is a process's, as a lock is.
// What every row checks: weights up to the limit and no further, all or
// none; a wait that ends with a release, and one that runs out; a killed
// holder's permits back (and its death told, where the store sees deaths);
// a weight-3 waiter not starved by weight-1 holders that come and go; a
// weight-2 waiter that gets two free slots while a peer holds slot 0; bad
// limits and weights refused; `ipclock run --limit`. The storm: N=3, eight
// contenders of weights 1 to 3, one killed every few milliseconds; never
// more than N permits held by live processes, every death told to the
// holder that takes a dead holder's slot, and no permit leaked at the end.
// IPCLOCK_SEMAPHORE_STORM_KILLS=1000 runs the storm until that many kills
// (the longer run); by default it lasts 2 s.

#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "ipclock/stores/etcd_store.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/stores/slot_semaphore_store.h"
#include "platform/proc_pid.h"
#include "cli_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::Store;
using ipclock_test::ForkChild;
using ipclock_test::NowSeconds;
using ipclock_test::SharedMemory;
using ipclock_test::Signal;
using ipclock_test::UniqueResource;
using ipclock_test::WaitChild;

std::string g_dsn;
bool g_storm = false;

// The store of the row, as a semaphore store.
std::shared_ptr<Store> OpenSemaphores() {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(g_dsn);
  if (!store.ok()) fail_msg("%s", store.status().ToString().c_str());
  return ipclock::SemaphoreStoreFor(*std::move(store));
}

absl::StatusOr<Lock> MakeSemaphore(const std::shared_ptr<Store>& store,
                                   const std::string& resource, uint32_t limit, uint32_t weight,
                                   absl::Duration ttl = absl::Seconds(300)) {
  ipclock::LockOptions options;
  options.permits = limit;
  options.weight = weight;
  options.ttl = ttl;
  return Lock::Create(store, resource, options);
}

uint32_t SlotBits(const Lock& lock) {
  uint32_t bits = 0;
  for (uint32_t slot : lock.slots()) bits |= 1u << slot;
  return bits;
}

// What a holder child reports, in memory shared with it.
struct HolderReport {
  std::atomic<int> got{-1};  // 1 held, 0 still busy at its deadline, 2 error
  std::atomic<int> died{-1};
  std::atomic<uint32_t> slot_bits{0};
};

// A forked process that takes `weight` of `limit` permits of `resource`,
// waiting up to `wait`, and holds them until told to let go.
class Holder {
 public:
  Holder(const std::string& resource, uint32_t limit, uint32_t weight,
         absl::Duration wait = absl::ZeroDuration(), absl::Duration ttl = absl::Seconds(300))
      : report_(SharedMemory<HolderReport>()) {
    HolderReport* report = report_;
    pid_ = ForkChild([&, report] {
      std::shared_ptr<Store> store = OpenSemaphores();
      absl::StatusOr<Lock> lock = MakeSemaphore(store, resource, limit, weight, ttl);
      if (!lock.ok()) {
        report->got = 2;
        answered_.Notify();
        return 2;
      }
      absl::StatusOr<bool> got = lock->TryAcquireFor(wait);
      if (!got.ok()) fprintf(stderr, "holder %d: %s\n", getpid(), got.status().ToString().c_str());
      report->died = lock->previous_owner_died() ? 1 : 0;
      report->slot_bits = SlotBits(*lock);
      report->got = !got.ok() ? 2 : *got ? 1 : 0;
      answered_.Notify();
      if (!got.ok() || !*got) return 0;
      go_.Wait(60);
      return lock->Release().ok() ? 0 : 3;
    });
  }

  // The child's answer: 1 held, 0 busy, 2 error.
  int Await() {
    if (answered_.Wait(30) == 0) fail_msg("holder %d did not answer", pid_);
    return report_->got.load();
  }
  bool died() const { return report_->died.load() == 1; }
  uint32_t slot_bits() const { return report_->slot_bits.load(); }

  // Lets go and reaps the child, which must have released cleanly.
  void Release() {
    go_.Notify();
    assert_int_equal(WaitChild(pid_), 0);
  }
  void Kill() { ipclock_test::KillChild(pid_); }

 private:
  HolderReport* report_;
  Signal answered_;
  Signal go_;
  pid_t pid_ = -1;
};

// The row's store as its messages name it (no password, unlike the DSN).
const char* Label() {
  static const std::string* label = new std::string(OpenSemaphores()->Describe());
  return label->c_str();
}

bool SeesDeaths() { return OpenSemaphores()->capabilities().owner_death; }

// Weights up to the limit, and no further, all or none; a failed try keeps
// nothing; slots, where the store uses them, are distinct and ascending.
void TakesUpToTheLimit(void**) {
  const std::string r = UniqueResource("sem-limit");
  Holder two(r, 3, 2);
  assert_int_equal(two.Await(), 1);
  std::shared_ptr<Store> store = OpenSemaphores();
  absl::StatusOr<Lock> a = MakeSemaphore(store, r, 3, 2);
  ASSERT_OK(a);
  absl::StatusOr<bool> got = a->TryAcquire();
  ASSERT_OK(got);
  assert_false(*got);  // 2 + 2 > 3
  absl::StatusOr<Lock> b = MakeSemaphore(store, r, 3, 1);
  ASSERT_OK(b);
  got = b->TryAcquire();
  ASSERT_OK(got);
  assert_true(*got);  // the failed try of two kept nothing
  // A semaphore's Lock is none of the stores' locks that these helpers
  // look into (they tell a store's class by its name).
  assert_int_equal(ipclock::FlockDescriptorOf(*b), -1);
  assert_false(ipclock::EtcdHeldKeyOf(*b).has_value());
  if (two.slot_bits() != 0) {
    assert_int_equal(two.slot_bits() & SlotBits(*b), 0u);
    assert_int_equal(__builtin_popcount(two.slot_bits()), 2);
  }
  absl::StatusOr<Lock> c = MakeSemaphore(store, r, 3, 1);
  ASSERT_OK(c);
  got = c->TryAcquire();
  ASSERT_OK(got);
  assert_false(*got);  // 3 of 3 held
  ASSERT_OK(b->Release());
  two.Release();
  absl::StatusOr<Lock> all = MakeSemaphore(store, r, 3, 3);
  ASSERT_OK(all);
  got = all->TryAcquire();
  ASSERT_OK(got);
  assert_true(*got);
  if (!all->slots().empty()) assert_true(all->slots() == (std::vector<uint32_t>{0, 1, 2}));
  ASSERT_OK(all->Release());
}

// A wait ends when enough permits come back, and runs out when they do not.
void WaitsForPermits(void**) {
  const std::string r = UniqueResource("sem-wait");
  Holder full(r, 2, 2);
  assert_int_equal(full.Await(), 1);
  std::shared_ptr<Store> store = OpenSemaphores();
  absl::StatusOr<Lock> lock = MakeSemaphore(store, r, 2, 1);
  ASSERT_OK(lock);
  absl::StatusOr<bool> got = lock->TryAcquireFor(absl::Milliseconds(300));
  ASSERT_OK(got);
  assert_false(*got);
  ASSERT_CODE(lock->Acquire(absl::Milliseconds(200)), absl::StatusCode::kDeadlineExceeded);
  Holder waiter(r, 2, 2, absl::Seconds(20));
  usleep(200 * 1000);
  const double released_at = NowSeconds();
  full.Release();
  assert_int_equal(waiter.Await(), 1);
  print_message("%s: a weight-2 waiter got in %.0f ms after the release\n", Label(),
                (NowSeconds() - released_at) * 1000);
  waiter.Release();
}

// A heavy waiter takes enough free slots when they come free, without
// waiting for the holder of a slot it would take in order: a peer holds
// lock R_0 (the slot store's own lock) all along, a weight-2 holder lets
// go of slots 1 and 2, and a weight-2 waiter gets them.
void HeavyWaiterTakesFreeSlotsAroundAHeldOne(void**) {
  const std::string r = UniqueResource("sem-around");
  Signal peer_holds, peer_go;
  const pid_t peer = ForkChild([&] {
    absl::StatusOr<std::shared_ptr<Store>> plain = ipclock::StoreFromDsn(g_dsn);
    if (!plain.ok()) return 2;
    ipclock::LockOptions options;
    options.ttl = absl::Seconds(300);
    absl::StatusOr<Lock> slot0 = Lock::Create(*plain, ipclock::SemaphoreSlotName(r, 0), options);
    if (!slot0.ok() || !slot0->Acquire(absl::Seconds(10)).ok()) return 3;
    peer_holds.Notify();
    peer_go.Wait(60);
    return slot0->Release().ok() ? 0 : 4;
  });
  if (peer_holds.Wait(30) == 0) fail_msg("the peer did not take R_0");
  Holder two(r, 3, 2);
  assert_int_equal(two.Await(), 1);
  Holder waiter(r, 3, 2, absl::Seconds(5));
  usleep(100 * 1000);  // waiting, behind slot 0 if it takes slots in order
  two.Release();
  assert_int_equal(waiter.Await(), 1);
  if (waiter.slot_bits() != 0) assert_int_equal(waiter.slot_bits(), 0b110u);
  waiter.Release();
  peer_go.Notify();
  assert_int_equal(WaitChild(peer), 0);
}

// A holder killed with -9 gives its permits back: at once where the store
// sees the death (told to the next holder), at its lease's end elsewhere.
void KilledHoldersPermitsComeBack(void**) {
  const std::string r = UniqueResource("sem-kill");
  const absl::Duration ttl = absl::Seconds(2);
  Holder victim(r, 2, 2, absl::ZeroDuration(), ttl);
  assert_int_equal(victim.Await(), 1);
  victim.Kill();
  std::shared_ptr<Store> store = OpenSemaphores();
  absl::StatusOr<Lock> lock = MakeSemaphore(store, r, 2, 2, ttl);
  ASSERT_OK(lock);
  const double start = NowSeconds();
  ASSERT_OK(lock->Acquire(absl::Seconds(15)));
  print_message("%s: a killed holder's 2 permits back after %.0f ms\n", Label(),
                (NowSeconds() - start) * 1000);
  if (SeesDeaths()) assert_true(lock->previous_owner_died());
  ASSERT_OK(lock->Release());
  // Told once: the next holder took the permits from one that let go.
  ASSERT_OK(lock->Acquire(absl::Seconds(5)));
  assert_false(lock->previous_owner_died());
  ASSERT_OK(lock->Release());
}

// Bad limits and weights are refused at once, naming what is wrong; a
// weight on a store that does not count with weights needs the slots.
void BadLimitsAndWeights(void**) {
  std::shared_ptr<Store> store = OpenSemaphores();
  const std::string r = UniqueResource("sem-bad");
  absl::StatusOr<Lock> lock = MakeSemaphore(store, r, 0, 1);
  assert_int_equal(lock.status().code(), absl::StatusCode::kInvalidArgument);
  lock = MakeSemaphore(store, r, 3, 0);
  assert_int_equal(lock.status().code(), absl::StatusCode::kInvalidArgument);
  lock = MakeSemaphore(store, r, 3, 4);
  assert_int_equal(lock.status().code(), absl::StatusCode::kInvalidArgument);
  ipclock_test::ExpectContains(std::string(lock.status().message()), "weight=4",
                               "weight over the limit");
  absl::StatusOr<std::shared_ptr<Store>> plain = ipclock::StoreFromDsn(g_dsn);
  ASSERT_OK(plain);
  if (!(*plain)->capabilities().weighted) {
    ipclock::LockOptions options;
    options.permits = 1;
    options.weight = 2;
    assert_int_equal(Lock::Create(*plain, r, options).status().code(),
                     absl::StatusCode::kInvalidArgument);
  }
  // The resource's other names: a slot is an ordinary lock, so a lock of
  // slot 0's name takes a permit; the semaphore's own name is another lock.
  absl::StatusOr<Lock> sem = MakeSemaphore(store, r, 1, 1);
  ASSERT_OK(sem);
  if (!store->capabilities().weighted) {
    absl::StatusOr<Lock> slot0 = Lock::Create(*plain, absl::StrCat(r, "_0"));
    ASSERT_OK(slot0);
    ASSERT_OK(slot0->Acquire(absl::Seconds(5)));
    absl::StatusOr<bool> got = sem->TryAcquire();
    ASSERT_OK(got);
    assert_false(*got);
    ASSERT_OK(slot0->Release());
  }
  absl::StatusOr<bool> got = sem->TryAcquire();
  ASSERT_OK(got);
  assert_true(*got);
  ASSERT_OK(sem->Release());
}

// Two holders that disagree on the limit, where the store records it (the
// kernel count): refused, naming both limits.
void DisagreeingLimitsAreRefusedWhereRecorded(void**) {
  std::shared_ptr<Store> store = OpenSemaphores();
  if (store->name() != "semaphore") {
    print_message("%s: the limit is not recorded; skipped\n", Label());
    return;
  }
  const std::string r = UniqueResource("sem-disagree");
  Holder three(r, 3, 1);
  assert_int_equal(three.Await(), 1);
  absl::StatusOr<Lock> two = MakeSemaphore(store, r, 2, 1);
  ASSERT_OK(two);
  absl::StatusOr<bool> got = two->TryAcquire();
  assert_false(got.ok());
  ipclock_test::ExpectContains(got.status().ToString(), "3", "the recorded limit");
  three.Release();
}

// A weight-3 waiter of limit 3 gets its permits behind four weight-1
// holders that keep coming back.
void HeavyWaiterIsNotStarved(void**) {
  const std::string r = UniqueResource("sem-heavy");
  struct Stop {
    std::atomic<int> stop{0};
    std::atomic<long> cycles{0};
  };
  Stop* stop = SharedMemory<Stop>();
  std::vector<pid_t> streamers;
  for (int i = 0; i < 4; ++i) {
    streamers.push_back(ForkChild([&] {
      std::shared_ptr<Store> store = OpenSemaphores();
      absl::StatusOr<Lock> lock = MakeSemaphore(store, r, 3, 1);
      if (!lock.ok()) return 2;
      while (stop->stop.load() == 0) {
        absl::StatusOr<bool> got = lock->TryAcquireFor(absl::Milliseconds(500));
        if (!got.ok()) return 3;
        if (!*got) continue;
        usleep(3000);
        if (!lock->Release().ok()) return 4;
        stop->cycles++;
      }
      return 0;
    }));
  }
  usleep(300 * 1000);
  std::shared_ptr<Store> store = OpenSemaphores();
  absl::StatusOr<Lock> heavy = MakeSemaphore(store, r, 3, 3);
  ASSERT_OK(heavy);
  const double start = NowSeconds();
  // A blocking store hands each slot it waits on to it; on a polling one
  // every freed slot is a race it wins now and then (0.9 s on memcached,
  // 1 to 15 s on SQLite with the suite's load): a longer bound there.
  const bool blocking = store->capabilities().blocking;
  absl::StatusOr<bool> got = heavy->TryAcquireFor(absl::Seconds(blocking ? 20 : 60));
  const double took = NowSeconds() - start;
  stop->stop = 1;
  const long cycles_before = stop->cycles.load();
  if (got.ok() && *got) ASSERT_OK(heavy->Release());
  for (pid_t p : streamers) assert_int_equal(WaitChild(p), 0);
  print_message("%s: the weight-3 waiter got in after %.0f ms, %ld weight-1 cycles meanwhile\n",
                Label(), took * 1000, cycles_before);
  ASSERT_OK(got);
  assert_true(*got);
}

// ipclock run --limit: two runs of limit 2 hold at once, a third -n run is
// busy; IPCLOCK_SLOTS names distinct slots on slot stores; a weight over
// the limit is a usage error.
void RunWithLimit(void**) {
  const std::string r = UniqueResource("sem-cli");
  const std::string out = ipclock_test::ScratchFile("sem-cli-slots");
  const std::string script =
      absl::StrCat("echo \"slots=$IPCLOCK_SLOTS\" >> ", out, "; sleep 3");
  std::vector<pid_t> runs;
  for (int i = 0; i < 2; ++i) {
    runs.push_back(ForkChild([&] {
      return ipclock_test::RunCli({"run", "--store", g_dsn, "--key", r, "--limit", "2", "-w",
                                   "10", "-c", script})
          .code;
    }));
  }
  std::vector<std::string> lines;
  for (double until = NowSeconds() + 20; NowSeconds() < until && lines.size() < 2;) {
    usleep(20 * 1000);
    lines.clear();
    std::ifstream in(out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  assert_int_equal(lines.size(), 2);
  ipclock_test::ExpectCode(ipclock_test::RunCli({"run", "--store", g_dsn, "--key", r, "--limit",
                                                 "2", "-n", "--", "true"}),
                           1, "a third run of limit 2");
  for (pid_t p : runs) assert_int_equal(WaitChild(p), 0);
  if (lines[0] != "slots=") assert_true(lines[0] != lines[1]);
  ipclock_test::ExpectCode(ipclock_test::RunCli({"run", "--store", g_dsn, "--key", r, "--limit",
                                                 "2", "--weight", "3", "--", "true"}),
                           64, "--weight over --limit");
}

// The storm's board, in memory shared with the contenders.
constexpr uint32_t kStormLimit = 3;
struct StormBoard {
  // The holder of each permit: the slot's, on slot stores; on the kernel
  // count, any free one (permits are alike there).
  std::atomic<pid_t> owner[kStormLimit];
  std::atomic<int> overlaps{0};
  std::atomic<int> errors{0};
  std::atomic<int> unreported{0};
  std::atomic<long> timeouts{0};
  std::atomic<long> cycles{0};
  std::atomic<long> dead_found{0};
  std::atomic<long> deaths_told{0};
  // The contenders sent SIGKILL, recorded before the kill: a robust mutex
  // is let go early in a killed process's exit, before ProcessIsGone() can
  // see it go (a long while under TSan, whose shadow memory is unmapped
  // after that).
  static constexpr int kKilledKept = 8192;
  std::atomic<pid_t> killed[kKilledKept];
  std::atomic<int> kills{0};
};

bool Gone(StormBoard* b, pid_t pid) {
  // The kernel lets go of a killed holder's locks while it exits, which
  // ProcessIsGone() counts as gone.
  if (ipclock::ProcessIsGone(pid, 0)) return true;
  const int n = std::min(b->kills.load(), StormBoard::kKilledKept);
  for (int i = 0; i < n; ++i) {
    if (b->killed[i].load() == pid) return true;
  }
  return false;
}

// Claims a permit on the board: `slot`'s, or any free one (slot < 0); its
// index, or -1 if none is free (more than the limit held by live
// processes). A permit whose owner is gone was a dead holder's.
int Claim(StormBoard* b, int slot, bool* took_dead) {
  const pid_t me = getpid();
  if (slot >= 0) {
    const pid_t before = b->owner[slot].exchange(me);
    if (before == 0) return slot;
    if (!Gone(b, before)) return -1;
    *took_dead = true;
    return slot;
  }
  for (uint32_t i = 0; i < kStormLimit; ++i) {
    pid_t seen = b->owner[i].load();
    if (seen == me || (seen != 0 && !Gone(b, seen))) continue;
    if (b->owner[i].compare_exchange_strong(seen, me)) {
      *took_dead = *took_dead || seen != 0;
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Contend(StormBoard* b, const std::string& resource, uint32_t weight, bool sees_deaths) {
  std::shared_ptr<Store> store = OpenSemaphores();
  absl::StatusOr<Lock> lock = MakeSemaphore(store, resource, kStormLimit, weight);
  if (!lock.ok()) return 2;
  unsigned seed = static_cast<unsigned>(getpid());
  for (;;) {
    absl::Status s = lock->Acquire(absl::Seconds(10));
    if (absl::IsDeadlineExceeded(s)) {
      b->timeouts++;
      continue;
    }
    if (!s.ok()) {
      b->errors++;
      fprintf(stderr, "contender %d: %s\n", getpid(), s.ToString().c_str());
      continue;
    }
    const std::vector<uint32_t> slots = lock->slots();
    std::vector<int> mine;
    bool took_dead = false;
    for (uint32_t i = 0; i < weight; ++i) {
      const int claimed = Claim(b, slots.empty() ? -1 : static_cast<int>(slots[i]), &took_dead);
      if (claimed < 0) {
        b->overlaps++;
      } else {
        mine.push_back(claimed);
      }
    }
    if (took_dead) b->dead_found++;
    if (lock->previous_owner_died()) b->deaths_told++;
    // On slot stores the dead holder's slot is this holder's: it must be told.
    if (took_dead && !slots.empty() && sees_deaths && !lock->previous_owner_died()) {
      b->unreported++;
    }
    if (rand_r(&seed) % 2 == 0) usleep(rand_r(&seed) % 500);
    for (int k : mine) {
      if (b->owner[k].exchange(0) != getpid()) b->overlaps++;
    }
    if (!lock->Release().ok()) b->errors++;
    b->cycles++;
  }
}

int StormKillsWanted() {
  const char* env = getenv("IPCLOCK_SEMAPHORE_STORM_KILLS");
  int kills = 0;
  if (env != nullptr && absl::SimpleAtoi(env, &kills) && kills > 0) return kills;
  return 0;
}

void KillStorm(void**) {
  if (!g_storm) return;
  const std::string r = UniqueResource("sem-storm");
  StormBoard* b = SharedMemory<StormBoard>();
  const bool sees_deaths = SeesDeaths();
  const uint32_t weights[] = {1, 1, 1, 1, 1, 2, 2, 3};
  std::vector<pid_t> pids;
  for (uint32_t w : weights) pids.push_back(ForkChild([&] { return Contend(b, r, w, sees_deaths); }));
  const int kills_wanted = StormKillsWanted();
  const double until = NowSeconds() + (kills_wanted > 0 ? 3600 : 2.0);
  unsigned seed = static_cast<unsigned>(getpid());
  int kills = 0;
  while (NowSeconds() < until && (kills_wanted == 0 || kills < kills_wanted)) {
    usleep(2000 + rand_r(&seed) % 10000);
    const size_t victim = rand_r(&seed) % pids.size();
    b->killed[b->kills.load() % StormBoard::kKilledKept] = pids[victim];
    b->kills++;
    kill(pids[victim], SIGKILL);
    WaitChild(pids[victim]);
    ++kills;
    const uint32_t w = weights[victim];
    pids[victim] = ForkChild([&] { return Contend(b, r, w, sees_deaths); });
  }
  for (pid_t p : pids) {
    kill(p, SIGKILL);
    WaitChild(p);
  }
  print_message(
      "%s: storm of %d kills: %ld cycles, %ld took a dead holder's permits, %ld told of a "
      "death, %ld waits ran out\n",
      Label(), kills, b->cycles.load(), b->dead_found.load(), b->deaths_told.load(),
      b->timeouts.load());
  assert_int_equal(b->overlaps.load(), 0);
  assert_int_equal(b->errors.load(), 0);
  assert_int_equal(b->unreported.load(), 0);
  assert_true(b->cycles.load() > 0);
  if (sees_deaths && b->dead_found.load() > 0) assert_true(b->deaths_told.load() > 0);
  // Nothing leaked: all N permits come back to one holder.
  std::shared_ptr<Store> store = OpenSemaphores();
  absl::StatusOr<Lock> all = MakeSemaphore(store, r, kStormLimit, kStormLimit);
  ASSERT_OK(all);
  ASSERT_OK(all->Acquire(absl::Seconds(15)));
  ASSERT_OK(all->Release());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::string(argv[2]) != "storm")) {
    fprintf(stderr, "usage: %s DSN [storm]\n", argv[0]);
    return 64;
  }
  g_dsn = ipclock_test::ExpandDsn(argv[1]);
  g_storm = argc == 3;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(TakesUpToTheLimit),
      cmocka_unit_test(WaitsForPermits),
      cmocka_unit_test(HeavyWaiterTakesFreeSlotsAroundAHeldOne),
      cmocka_unit_test(KilledHoldersPermitsComeBack),
      cmocka_unit_test(BadLimitsAndWeights),
      cmocka_unit_test(DisagreeingLimitsAreRefusedWhereRecorded),
      cmocka_unit_test(HeavyWaiterIsNotStarved),
      cmocka_unit_test(RunWithLimit),
      cmocka_unit_test(KillStorm),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
