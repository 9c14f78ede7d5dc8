// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The shm store's slot table: more than 65,536 resources, the refusal of a
// segment of the previous layout, a binder killed while it held the table's
// mutex (its half-done work repaired by the next one), and processes killed
// at random while names keep moving between too few slots. Exclusion must
// hold throughout and no name may ever be bound to two slots.

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock/lock.h"
#include "ipclock/stores/shm_store.h"
#include "ipclock/store_factory.h"
#include "stores/shm/shm_mutex_store.h"
#include "shm_test_util.h"  // last: it pulls in cmocka.h

// ThreadSanitizer's deadlock detector keeps at most 64 mutexes held by one
// thread and aborts beyond that; one thread of this test holds 100,000.
// Races are still reported. (Only a TSan runtime calls this.)
extern "C" const char* __tsan_default_options() { return "detect_deadlocks=0"; }

namespace {

using ipclock::Lock;
using ipclock::ShmHeader;
using ipclock::Store;
using namespace ipclock_test;

// Fails unless every bound name appears in one slot only.
void AssertEachNameOnce(const std::string& name) {
  absl::StatusOr<std::vector<ipclock::ShmSlotInfo>> slots = ipclock::ListShmSlots(name);
  ASSERT_OK(slots);
  std::map<std::string, uint32_t> seen;
  for (const ipclock::ShmSlotInfo& s : *slots) {
    auto [it, fresh] = seen.emplace(s.name, s.index);
    if (!fresh) {
      fail_msg("\"%s\" is bound to slots %u and %u", s.name.c_str(), it->second, s.index);
    }
  }
}

// 100,000 resources held at once in one segment, beyond the 65,536 slots a
// segment could have before; one more than the capacity is refused, naming
// it; another process sees every one of them held.
void HoldsMoreThan65536Resources(void**) {
  const ScratchSegment segment("big");
  const std::string& name = segment.name();
  constexpr int kCapacity = 100000;
  auto store = OpenShmStore(absl::StrCat("shm://", name, "?capacity=", kCapacity));
  std::vector<Lock> held;
  held.reserve(kCapacity);
  for (int i = 0; i < kCapacity; ++i) {
    held.push_back(LockOrFail(store, absl::StrCat("resource-", i)));
    if (!TryOrFail(held.back())) fail_msg("resource-%d was not free", i);
  }
  Lock extra = LockOrFail(store, "one-too-many");
  absl::StatusOr<bool> got = extra.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kResourceExhausted);
  AssertMessageHas(got.status(), "capacity");
  pid_t child = ForkChild([&] {
    std::shared_ptr<Store> other = OpenShmStoreOrNull(absl::StrCat("shm://", name));
    if (other == nullptr) return 4;
    for (int i = 0; i < kCapacity; i += 997) {
      absl::StatusOr<Lock> l = Lock::Create(other, absl::StrCat("resource-", i));
      if (!l.ok()) return 2;
      absl::StatusOr<bool> free = l->TryAcquire();
      if (!free.ok() || *free) return 3;
    }
    return 0;
  });
  assert_int_equal(WaitChild(child, 120), 0);
  ASSERT_OK(held[4242].Release());
  TakeAndRelease(extra);
  held.clear();
  AssertEachNameOnce(name);
}

// A segment of the layout before this one (version 1) is refused, not read.
void PreviousLayoutIsRefused(void**) {
  const ScratchSegment segment("v1");
  const std::string& name = segment.name();
  OpenShmStore(absl::StrCat("shm://", name));
  size_t size = 0;
  auto* h = static_cast<ShmHeader*>(MapShmSegment(name, &size));
  assert_non_null(h);
  h->version = 1;
  absl::StatusOr<std::shared_ptr<Store>> s = ipclock::StoreFromDsn(absl::StrCat("shm://", name));
  ASSERT_CODE(s, absl::StatusCode::kFailedPrecondition);
  AssertMessageHas(s.status(), "layout version 1 where this build has 2");
  ASSERT_CODE(ipclock::ListShmSlots(name), absl::StatusCode::kFailedPrecondition);
  munmap(h, size);
}

// What a binder killed between binding a name and publishing its index
// entry leaves: table_mu abandoned (EOWNERDEAD), `rebinding` naming the
// position, the entry without its tag. The next binder must repair the
// entry before it looks, or it would bind the name a second time while a
// Key holds it in its first slot.
void KilledBinderIsRepaired(void**) {
  const ScratchSegment segment("repair");
  const std::string& name = segment.name();
  auto store = OpenShmStore(absl::StrCat("shm://", name, "?capacity=64"));
  Lock holder = HeldOrFail(store, "a");
  size_t size = 0;
  void* base = MapShmSegment(name, &size);
  assert_non_null(base);
  auto* h = static_cast<ShmHeader*>(base);
  auto* index = reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(base) +
                                                         ipclock::kShmIndexOffset);
  uint32_t position = h->capacity;
  for (uint32_t i = 0; i < h->capacity; ++i) {
    if (ipclock::ShmEntryTag(index[i].load()) != 0) position = i;
  }
  assert_true(position < h->capacity);
  const uint64_t entry = index[position].load();
  pid_t binder = ForkChild([&] {
    if (pthread_mutex_lock(&h->table_mu) != 0) return 2;
    h->rebinding = position + 1;
    index[position].store(ipclock::ShmIndexEntry(0, ipclock::ShmEntrySlotPlusOne(entry)));
    kill(getpid(), SIGKILL);
    return 3;
  });
  assert_int_equal(WaitChild(binder), 128 + SIGKILL);
  // A fresh store finds no tag for "a" and binds under table_mu.
  auto other = OpenShmStore(absl::StrCat("shm://", name));
  Lock rival = LockOrFail(other, "a");
  assert_false(TryOrFail(rival));
  assert_int_equal(index[position].load(), entry);
  assert_int_equal(h->rebinding, 0);
  AssertEachNameOnce(name);
  const uint32_t unused = h->next_unused;

  // Killed after handing a slot to a position but before counting it: the
  // repair counts it, so no other position gets the same slot.
  uint32_t free_position = h->capacity;
  for (uint32_t i = 0; i < h->capacity; ++i) {
    if (index[i].load() == 0) free_position = i;
  }
  assert_true(free_position < h->capacity);
  binder = ForkChild([&] {
    if (pthread_mutex_lock(&h->table_mu) != 0) return 2;
    h->rebinding = free_position + 1;
    index[free_position].store(ipclock::ShmIndexEntry(0, h->next_unused + 1));
    kill(getpid(), SIGKILL);
    return 3;
  });
  assert_int_equal(WaitChild(binder), 128 + SIGKILL);
  Lock fresh = HeldOrFail(other, "b-never-seen");
  assert_true(h->next_unused >= unused + 1);
  for (uint32_t i = 0; i < h->capacity; ++i) {
    for (uint32_t j = i + 1; j < h->capacity; ++j) {
      const uint32_t a = ipclock::ShmEntrySlotPlusOne(index[i].load());
      if (a != 0 && a == ipclock::ShmEntrySlotPlusOne(index[j].load())) {
        fail_msg("positions %u and %u share slot %u", i, j, a - 1);
      }
    }
  }
  ASSERT_OK(holder.Release());
  assert_true(TryOrFail(rival));
  munmap(base, size);
}

// Far more names than slots, so that nearly every first acquisition
// rebinds a slot, in processes that are killed every few milliseconds,
// wherever they are (in a bind, holding a lock, releasing). Exclusion must
// hold for every name, and no name may end up in two slots.
void KillsWhileSlotsMove(void**) {
  const ScratchSegment segment("churnkill");
  const std::string& name = segment.name();
  OpenShmStore(absl::StrCat("shm://", name, "?capacity=8"));
  constexpr int kNames = 24, kProcs = 3;
  struct Shared {
    std::atomic<int> inside[kNames];
    std::atomic<int> violations{0};
    std::atomic<long> acquisitions{0};
  };
  Shared* shared = SharedMemory<Shared>();
  auto worker = [&] {
    return ForkChild([&] {
      std::shared_ptr<Store> store = OpenShmStoreOrNull(absl::StrCat("shm://", name));
      if (store == nullptr) return 5;
      unsigned seed = static_cast<unsigned>(getpid());
      for (;;) {
        const int n = static_cast<int>(rand_r(&seed) % kNames);
        // A new Lock each time: every acquisition looks its name up.
        absl::StatusOr<Lock> lock = Lock::Create(store, absl::StrCat("name-", n));
        if (!lock.ok()) return 2;
        absl::StatusOr<bool> got = lock->TryAcquireFor(absl::Milliseconds(50));
        if (!got.ok()) {
          // A full table (holders that died keep their slots until told)
          // is allowed; nothing else is.
          if (got.status().code() != absl::StatusCode::kResourceExhausted) return 3;
          continue;
        }
        if (!*got) continue;
        // A holder killed here leaves inside[n] raised; its next holder
        // is told (owner death) and lowers it.
        if (lock->previous_owner_died()) shared->inside[n].store(0);
        if (shared->inside[n].fetch_add(1) != 0) shared->violations++;
        shared->acquisitions++;
        shared->inside[n].fetch_sub(1);
        if (!lock->Release().ok()) return 4;
      }
    });
  };
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) pids.push_back(worker());
  const double end = NowSeconds() + 3;
  unsigned seed = 7;
  while (NowSeconds() < end) {
    usleep(2000 + rand_r(&seed) % 5000);
    const int victim = static_cast<int>(rand_r(&seed) % kProcs);
    kill(pids[victim], SIGKILL);
    const int status = WaitChild(pids[victim]);
    if (status != 128 + SIGKILL) fail_msg("a worker ended with status %d", status);
    pids[victim] = worker();
  }
  for (pid_t pid : pids) {
    kill(pid, SIGKILL);
    WaitChild(pid);
  }
  assert_int_equal(shared->violations.load(), 0);
  assert_true(shared->acquisitions.load() > 100);
  AssertEachNameOnce(name);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(HoldsMoreThan65536Resources),
      cmocka_unit_test(PreviousLayoutIsRefused),
      cmocka_unit_test(KilledBinderIsRepaired),
      cmocka_unit_test(KillsWhileSlotsMove),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
