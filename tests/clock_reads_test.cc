// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A reused Lock on the shm and posix-semaphore stores reads no precise
// clock per acquire + release. Those paths cost tens of nanoseconds, and on
// a machine whose vDSO cannot read the TSC (many VMs) one CLOCK_MONOTONIC
// read costs 20 to 40 ns: a read per call would double them there
// (doc/performance.md). What decides whether a check is due reads
// CLOCK_MONOTONIC_COARSE or time(), which the kernel keeps per tick.
//
// This program defines clock_gettime() and time() itself, so that the
// library's calls, linked into it, come here and are counted by clock.

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "ipclock/lock.h"
#include "ipclock/metrics.h"
#include "ipclock/store_factory.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

// Counted only on the thread that sets it, while it is set.
thread_local bool t_counting = false;
std::atomic<int> g_precise{0};  // CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, ...
std::atomic<int> g_coarse{0};   // the *_COARSE clocks and time()

template <typename F>
F Next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" int clock_gettime(clockid_t clock, struct timespec* ts) {
  static const auto next = Next<int (*)(clockid_t, struct timespec*)>("clock_gettime");
  if (t_counting) {
    const bool coarse = clock == CLOCK_MONOTONIC_COARSE || clock == CLOCK_REALTIME_COARSE;
    (coarse ? g_coarse : g_precise).fetch_add(1, std::memory_order_relaxed);
  }
  return next(clock, ts);
}

extern "C" time_t time(time_t* out) {
  static const auto next = Next<time_t (*)(time_t*)>("time");
  if (t_counting) g_coarse.fetch_add(1, std::memory_order_relaxed);
  return next(out);
}

namespace ipclock_test {
namespace {

constexpr int kCycles = 1000;

// The precise reads that metrics' sampled hold times may make: a read at
// the acquisition and one at the release of one hold in kHoldSampleEvery
// (ipclock/metrics.h), about a nanosecond a call. With metrics=off, none.
constexpr int kSampledReads = 2 * (kCycles / ipclock::kHoldSampleEvery + 1);

// kCycles acquire + release of one reused Lock, after one to warm up; at
// most `allowed` precise clock reads among them.
void CountReusedHandle(const std::string& dsn, int allowed) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  ASSERT_OK(store);
  ipclock::Lock lock = LockOrFail(*store, UniqueResource("clock"));
  TakeAndRelease(lock);
  // The counting itself is checked: one read of each kind, counted.
  t_counting = true;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  t_counting = false;
  assert_int_equal(g_precise.exchange(0), 1);
  assert_int_equal(g_coarse.exchange(0), 1);

  t_counting = true;
  bool ok = true;
  for (int i = 0; i < kCycles && ok; ++i) {
    absl::StatusOr<bool> got = lock.TryAcquire();
    ok = got.ok() && *got && lock.Release().ok();
  }
  t_counting = false;
  assert_true(ok);
  const int precise = g_precise.exchange(0);
  const int coarse = g_coarse.exchange(0);
  print_message("%s: %d cycles read a precise clock %d times, a coarse one %d times\n",
                dsn.c_str(), kCycles, precise, coarse);
  if (precise > allowed) {
    fail_msg("%s: a reused handle read a precise clock %d times in %d acquire + release "
             "(at most %d)",
             dsn.c_str(), precise, kCycles, allowed);
  }
}

void test_shm_reused_handle(void** state) {
  (void)state;
  CountReusedHandle(absl::StrCat("shm://", UniqueShmName("clock")), kSampledReads);
  CountReusedHandle(absl::StrCat("shm://", UniqueShmName("clock"), "?metrics=off"), 0);
}

void test_posix_semaphore_reused_handle(void** state) {
  (void)state;
  CountReusedHandle(absl::StrCat("posix-semaphore?prefix=", UniqueShmName("clock")),
                    kSampledReads);
  CountReusedHandle(
      absl::StrCat("posix-semaphore?prefix=", UniqueShmName("clock"), "&metrics=off"), 0);
}

}  // namespace
}  // namespace ipclock_test

int main(void) {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shm_reused_handle),
      cmocka_unit_test(test_posix_semaphore_reused_handle),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
