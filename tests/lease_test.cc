// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Leases at the Lock level, on the in-memory store (expiring) with short
// TTLs: a lock released after its lease ran out is reported (Aborted from
// Release, and a kLeaseOverrun diagnostic once per lock, to the store's sink
// or the process default). Bounds are
// generous: the checks are about several TTLs, never about milliseconds.

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "ipclock/stores/in_memory_store.h"
#include "ipclock/diagnostics.h"
#include "ipclock/lock.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Key;
using ipclock::Diagnostic;
using ipclock::DiagnosticKind;
using ipclock::Lock;
using ipclock::LockMode;
using ipclock::LockOptions;
using ipclock::Store;
using namespace ipclock_test;

constexpr absl::Duration kTtl = absl::Milliseconds(600);


// Collects the overruns that reach the process default sink from
// construction on; the destructor puts the first default back. The reports
// live in static storage, so a test that fails (and longjmps past the
// destructor) leaves a sink that still works.
class OverrunRecorder {
 public:
  OverrunRecorder() {
    {
      std::lock_guard<std::mutex> guard(mu_);
      seen_.clear();
    }
    ipclock::SetDefaultDiagnosticSink(Record);
  }
  ~OverrunRecorder() { ipclock::SetDefaultDiagnosticSink(ipclock::WriteDiagnosticToStderr); }
  // A sink that records, for a store of its own.
  static void Record(const Diagnostic& d) {
    if (d.kind != DiagnosticKind::kLeaseOverrun) return;
    std::lock_guard<std::mutex> guard(mu_);
    seen_.push_back(d);
  }
  std::vector<Diagnostic> seen() {
    std::lock_guard<std::mutex> guard(mu_);
    return seen_;
  }

 private:
  static std::mutex mu_;
  static std::vector<Diagnostic> seen_;
};
std::mutex OverrunRecorder::mu_;
std::vector<Diagnostic> OverrunRecorder::seen_;

// `resource` held through `store` with a lease of `ttl`, and kept four
// times as long: its lease has run out.
Lock HeldPastItsLease(const std::shared_ptr<Store>& store, const std::string& resource,
                      absl::Duration ttl) {
  Lock lock = HeldOrFail(store, resource, Ttl(ttl));
  absl::SleepFor(4 * ttl);
  return lock;
}

// --- Overrun reports ------------------------------------------------------------

void OverrunIsReportedOnRelease(void**) {
  OverrunRecorder recorder;
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("overrun");
  Lock lock = HeldPastItsLease(store, r, absl::Milliseconds(100));
  // The store let a rival in meanwhile; the late release must not touch it.
  Lock rival = HeldOrFail(store, r, Ttl(kTtl));
  absl::Status s = lock.Release();
  ASSERT_CODE(s, absl::StatusCode::kAborted);
  assert_true(absl::StrContains(s.message(), "before release"));
  assert_false(lock.is_acquired());
  std::vector<Diagnostic> seen = recorder.seen();
  assert_int_equal(seen.size(), 1);
  assert_string_equal(seen[0].resource.c_str(), r.c_str());
  assert_true(seen[0].overrun >= absl::Milliseconds(200));
  assert_true(seen[0].ttl == absl::Milliseconds(100));
  ASSERT_CODE(seen[0].status, absl::StatusCode::kAborted);
  assert_true(absl::StrContains(seen[0].text, "before release"));
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
    Lock lock = HeldPastItsLease(store, r, absl::Milliseconds(50));
  }
  assert_int_equal(recorder.seen().size(), 1);
  // A release in time says nothing.
  {
    Lock lock = LockOrFail(store, r, Ttl(kTtl));
    TakeAndRelease(lock);
  }
  assert_int_equal(recorder.seen().size(), 1);
}

// A store built with a sink of its own (StoreOptions::diagnostics) tells
// that sink, and the process default hears nothing.
void StoreSinkGetsItsOverruns(void**) {
  static std::atomic<int> own{0};
  own = 0;
  OverrunRecorder recorder;  // the process default
  ipclock::StoreOptions options;
  options.diagnostics = [](const Diagnostic& d) {
    if (d.kind == DiagnosticKind::kLeaseOverrun) own++;
  };
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn("in-memory", options);
  ASSERT_OK(store.status());
  Lock lock = HeldPastItsLease(*store, UniqueResource("own-sink"), absl::Milliseconds(50));
  ASSERT_CODE(lock.Release(), absl::StatusCode::kAborted);
  assert_int_equal(own.load(), 1);
  assert_int_equal(recorder.seen().size(), 0);
  // Set on a store afterwards, the same.
  std::shared_ptr<Store> typed = ipclock::NewInMemoryStore();
  typed->SetDiagnosticSink(OverrunRecorder::Record);
  ipclock::SetDefaultDiagnosticSink(nullptr);
  Lock other = HeldPastItsLease(typed, UniqueResource("set-sink"), absl::Milliseconds(50));
  ASSERT_CODE(other.Release(), absl::StatusCode::kAborted);
  assert_int_equal(recorder.seen().size(), 1);
}

void DefaultSinkWritesOneLine(void**) {
  ipclock::SetDefaultDiagnosticSink(ipclock::WriteDiagnosticToStderr);
  auto store = ipclock::NewInMemoryStore();
  std::string r = UniqueResource("stderr");
  Lock lock = HeldPastItsLease(store, r, absl::Milliseconds(50));
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
  ipclock::DiagnosticSink quiet = ipclock::SetDefaultDiagnosticSink(nullptr);
  ASSERT_CODE(reader.Release(), absl::StatusCode::kAborted);
  ipclock::SetDefaultDiagnosticSink(quiet);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(OverrunIsReportedOnRelease),
      cmocka_unit_test(DestructorReportsToo),
      cmocka_unit_test(StoreSinkGetsItsOverruns),
      cmocka_unit_test(DefaultSinkWritesOneLine),
      cmocka_unit_test(FailedConversionKeepsTheLease),
  };
  return cmocka_run_group_tests_name("lease", tests, nullptr, nullptr);
}
