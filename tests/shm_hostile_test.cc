// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The shm store against a process that may write its segment (the same
// user, or a group given mode=0660) and writes nonsense into it while we
// use it: every value in the segment is read as hostile. Opening, listing
// and locking must fail with a clear status or work, and never crash (the
// suite runs under ASan too).

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "ipclock/lock.h"
#include "ipclock/stores/shm_store.h"
#include "ipclock/store_factory.h"
#include "stores/shm/shm_mutex_store.h"
#include "shm_test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::ShmHeader;
using ipclock::Store;
using namespace ipclock_test;

struct Flags {
  std::atomic<bool> stop{false};
  std::atomic<long> flips{0};
};

template <typename T>
void Put(T* field, T value) {
  __atomic_store_n(field, value, __ATOMIC_RELAXED);
}

// A child that flips header fields between sane and hostile values until
// told to stop, then puts the sane ones back.
pid_t StartHeaderFlipper(const std::string& name, Flags* flags) {
  return ForkChild([name, flags] {
    size_t size = 0;
    void* p = MapShmSegment(name, &size);
    if (p == nullptr) return 2;
    auto* h = static_cast<ShmHeader*>(p);
    const uint32_t header_size = h->header_size;
    const uint32_t capacity = h->capacity;
    const uint32_t slot_size = h->slot_size;
    const uint32_t max_displacement =
        reinterpret_cast<std::atomic<uint32_t>*>(&h->max_displacement)->load();
    for (long i = 0; !flags->stop.load(std::memory_order_relaxed); ++i) {
      const bool bad = (i & 1) != 0;
      // An offset of almost 4 GB, a capacity far beyond the mapping.
      Put(&h->header_size, bad ? 0xfffffff0u : header_size);
      Put(&h->capacity, bad ? 0xffffffffu : capacity);
      Put(&h->slot_size, bad ? 0x40000000u : slot_size);
      Put(reinterpret_cast<uint32_t*>(&h->max_displacement),
          bad ? 0xffffffffu : max_displacement);
      flags->flips.fetch_add(1, std::memory_order_relaxed);
    }
    Put(&h->header_size, header_size);
    Put(&h->capacity, capacity);
    Put(&h->slot_size, slot_size);
    Put(reinterpret_cast<uint32_t*>(&h->max_displacement), max_displacement);
    return 0;
  });
}

// A child that scribbles over every byte of every slot (names, lengths,
// states, generations, the index), except the mutexes.
pid_t StartSlotScribbler(const std::string& name, Flags* flags) {
  return ForkChild([name, flags] {
    size_t size = 0;
    void* p = MapShmSegment(name, &size);
    if (p == nullptr) return 2;
    auto* bytes = static_cast<unsigned char*>(p);
    const uint32_t capacity = static_cast<ShmHeader*>(p)->capacity;
    const size_t slots = ipclock::ShmSlotsOffset(capacity);
    unsigned seed = static_cast<unsigned>(getpid());
    while (!flags->stop.load(std::memory_order_relaxed)) {
      for (size_t off = ipclock::kShmIndexOffset; off + 8 <= size; off += 8) {
        // Leave the mutexes alone: a broken mutex is a lock held forever,
        // which is allowed, but makes the run pointlessly slow.
        if (off >= slots &&
            (off - slots) % sizeof(ipclock::ShmSlot) < sizeof(pthread_mutex_t) + 8) {
          continue;
        }
        uint64_t v = (static_cast<uint64_t>(rand_r(&seed)) << 32) | rand_r(&seed);
        if (rand_r(&seed) % 4 == 0) v = ~uint64_t{0};
        Put(reinterpret_cast<uint64_t*>(bytes + off), v);
      }
      flags->flips.fetch_add(1, std::memory_order_relaxed);
    }
    return 0;
  });
}

// CMocka catches SIGSEGV and SIGBUS to report them; in a child, the plain
// death by the signal is the clearer report (status 128+N).
void DefaultCrashSignals() {
  signal(SIGSEGV, SIG_DFL);
  signal(SIGBUS, SIG_DFL);
}

// Opens, lists and locks `rounds` times; returns 0 if nothing crashed.
int UseSegment(const std::string& name, int rounds, int* opened) {
  const std::string dsn = absl::StrCat("shm://", name);
  for (int i = 0; i < rounds; ++i) {
    absl::StatusOr<std::vector<ipclock::ShmSlotInfo>> listed = ipclock::ListShmSlots(name);
    if (!listed.ok() && listed.status().code() != absl::StatusCode::kFailedPrecondition) {
      return 3;
    }
    absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
    if (!store.ok()) {
      if (store.status().code() != absl::StatusCode::kFailedPrecondition) return 4;
      continue;
    }
    ++*opened;
    absl::StatusOr<Lock> lock = Lock::Create(*store, absl::StrCat("r", i % 16));
    if (!lock.ok()) return 5;
    absl::StatusOr<bool> got = lock->TryAcquire();
    if (got.ok() && *got) lock->Release().IgnoreError();
  }
  return 0;
}

// UseSegment(name, rounds) while `attacker` writes over the segment, then
// the attacker stopped; fails the test unless both ended cleanly. The user
// runs in a child of its own so that a crash is an exit status this test
// reports, not the end of the test program. Returns how many opens passed.
int UseWhileAttacked(const std::string& name, int rounds, pid_t attacker, Flags* flags) {
  int* opened = SharedMemory<int>();
  pid_t user = ForkChild([&] {
    DefaultCrashSignals();
    return UseSegment(name, rounds, opened);
  });
  const int status = WaitChild(user, 600);
  flags->stop = true;
  assert_int_equal(WaitChild(attacker), 0);
  if (status != 0) {
    fail_msg("the segment's user ended with status %d%s", status,
             status > 128 ? absl::StrCat(" (", strsignal(status - 128), ")").c_str() : "");
  }
  return *opened;
}

void RacingHeaderWriterCannotCrashOpenersOrListers(void**) {
  const ScratchSegment segment("flip");
  const std::string& name = segment.name();
  OpenShmStore(absl::StrCat("shm://", name, "?capacity=64"));  // makes the segment
  Flags* flags = SharedMemory<Flags>();
  pid_t flipper = StartHeaderFlipper(name, flags);
  while (flags->flips.load() < 1000) usleep(100);
  const int opened = UseWhileAttacked(name, 4000, flipper, flags);
  fprintf(stderr, "opened %d of 4000 times while the header was rewritten %ld times\n", opened,
          flags->flips.load());
  // The header is sane again: everything works.
  int opened_after = 0;
  assert_int_equal(UseSegment(name, 10, &opened_after), 0);
  HeldOrFail(OpenShmStore(absl::StrCat("shm://", name)), "after");
}

void ScribbledSlotsCannotCrashLockersOrListers(void**) {
  const ScratchSegment segment("scribble");
  const std::string& name = segment.name();
  std::shared_ptr<Store> store = OpenShmStore(absl::StrCat("shm://", name, "?capacity=32"));
  // Bind some names first, so that there is something to corrupt.
  for (int i = 0; i < 16; ++i) HeldOrFail(store, absl::StrCat("r", i));
  Flags* flags = SharedMemory<Flags>();
  pid_t scribbler = StartSlotScribbler(name, flags);
  while (flags->flips.load() < 10) usleep(100);
  UseWhileAttacked(name, 3000, scribbler, flags);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(RacingHeaderWriterCannotCrashOpenersOrListers),
      cmocka_unit_test(ScribbledSlotsCannotCrashLockersOrListers),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
