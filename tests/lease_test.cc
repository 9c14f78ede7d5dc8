// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Leases at the Lock level, on the in-memory store (expiring) with short
// TTLs: a lock released after its lease ran out is reported (Aborted from
// Release, and the lease-overrun handler once per lock). Bounds are
// generous: the checks are about several TTLs, never about milliseconds.

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "ipclock/stores/in_memory_store.h"
#include "ipclock/lease_overrun.h"
#include "ipclock/lock.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/store.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Key;
using ipclock::LeaseOverrun;
using ipclock::Lock;
using ipclock::LockMode;
using ipclock::LockOptions;
using ipclock::Store;
using namespace ipclock_test;

constexpr absl::Duration kTtl = absl::Milliseconds(600);

LockOptions Ttl(absl::Duration ttl) {
  LockOptions options;
  options.ttl = ttl;
  return options;
}

// Collects the reports from construction on; the destructor puts the
// default handler back. The reports live in static storage, so a test that
// fails (and longjmps past the destructor) leaves a handler that still works.
class OverrunRecorder {
 public:
  OverrunRecorder() {
    {
      std::lock_guard<std::mutex> guard(mu_);
      seen_.clear();
    }
    ipclock::SetLeaseOverrunHandler([](const LeaseOverrun& o) {
      std::lock_guard<std::mutex> guard(mu_);
      seen_.push_back(o);
    });
  }
  ~OverrunRecorder() { ipclock::SetLeaseOverrunHandler(ipclock::WriteLeaseOverrunMessage); }
  std::vector<LeaseOverrun> seen() {
    std::lock_guard<std::mutex> guard(mu_);
    return seen_;
  }

 private:
  static std::mutex mu_;
  static std::vector<LeaseOverrun> seen_;
};
std::mutex OverrunRecorder::mu_;
std::vector<LeaseOverrun> OverrunRecorder::seen_;

// --- Overrun reports ------------------------------------------------------------

void OverrunIsReportedOnRelease(void**) {
  OverrunRecorder recorder;
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("overrun");
  Lock lock = LockOrFail(store, r, Ttl(absl::Milliseconds(100)));
  assert_true(TryOrFail(lock));
  absl::SleepFor(absl::Milliseconds(400));
  // The store let a rival in meanwhile; the late release must not touch it.
  Lock rival = LockOrFail(store, r, Ttl(kTtl));
  assert_true(TryOrFail(rival));
  absl::Status s = lock.Release();
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  assert_true(absl::StrContains(s.message(), "before release"));
  assert_false(lock.is_acquired());
  std::vector<LeaseOverrun> seen = recorder.seen();
  assert_int_equal(seen.size(), 1);
  assert_string_equal(seen[0].resource.c_str(), r.c_str());
  assert_true(seen[0].overrun >= absl::Milliseconds(200));
  assert_true(seen[0].ttl == absl::Milliseconds(100));
  // Once per lock.
  ASSERT_OK(lock.Release());
  assert_int_equal(recorder.seen().size(), 1);
  ASSERT_OK(rival.CheckAcquired());
}

void DestructorReportsToo(void**) {
  OverrunRecorder recorder;
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("dtor");
  {
    Lock lock = LockOrFail(store, r, Ttl(absl::Milliseconds(50)));
    assert_true(TryOrFail(lock));
    absl::SleepFor(absl::Milliseconds(200));
  }
  assert_int_equal(recorder.seen().size(), 1);
  // A release in time says nothing.
  {
    Lock lock = LockOrFail(store, r, Ttl(kTtl));
    assert_true(TryOrFail(lock));
    ASSERT_OK(lock.Release());
  }
  assert_int_equal(recorder.seen().size(), 1);
}

void DefaultHandlerWritesOneLine(void**) {
  ipclock::SetLeaseOverrunHandler(ipclock::WriteLeaseOverrunMessage);
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("stderr");
  Lock lock = LockOrFail(store, r, Ttl(absl::Milliseconds(50)));
  assert_true(TryOrFail(lock));
  absl::SleepFor(absl::Milliseconds(200));
  absl::Status s;
  std::string out = CaptureStderr([&] {
    s = lock.Release();
    s.Update(lock.Release());  // no second line
  });
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  assert_true(absl::StrContains(out, r));
  assert_true(absl::StrContains(out, "before release"));
  assert_int_equal(std::count(out.begin(), out.end(), '\n'), 1);
}

// A conversion that fails leaves the lease as the store has it: the key must
// not claim a fresh lease the store never granted.
void FailedConversionKeepsTheLease(void**) {
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("convert");
  Lock reader = LockOrFail(store, r, Ttl(absl::Milliseconds(400)));
  Lock other = LockOrFail(store, r, Ttl(absl::Seconds(30)));
  assert_true(TryOrFail(reader, LockMode::kShared));
  assert_true(TryOrFail(other, LockMode::kShared));
  absl::SleepFor(absl::Milliseconds(200));
  // Two readers: the promotion fails (another reader is in).
  assert_false(TryOrFail(reader, LockMode::kExclusive));
  assert_true(reader.is_acquired());
  assert_true(reader.RemainingLifetime() <= absl::Milliseconds(200));
  absl::SleepFor(absl::Milliseconds(300));
  // The store dropped the reader when its lease ran out; so does the key.
  assert_true(reader.IsExpired());
  ipclock::LeaseOverrunHandler quiet = ipclock::SetLeaseOverrunHandler(nullptr);
  ASSERT_CODE(reader.Release(), absl::StatusCode::kAborted);
  ipclock::SetLeaseOverrunHandler(quiet);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(OverrunIsReportedOnRelease),
      cmocka_unit_test(DestructorReportsToo),
      cmocka_unit_test(DefaultHandlerWritesOneLine),
      cmocka_unit_test(FailedConversionKeepsTheLease),
  };
  return cmocka_run_group_tests_name("lease", tests, nullptr, nullptr);
}
