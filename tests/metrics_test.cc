// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Lock metrics (ipclock/metrics.h) against real contention: holders in
// forked processes, a holder killed while it holds, a lock file deleted
// under its holder; the metrics= DSN option; the text for Prometheus,
// checked by promtool where it is installed (always under CI=true).

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli_util.h"
#include "forwarding_store.h"
#include "ipclock/ipclock.h"
#include "ipclock/spi/store_interface.h"
#include "ipclock/stores/in_memory_store.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

using ipclock::LockCounters;

std::shared_ptr<ipclock::Store> OpenOrFail(const std::string& dsn) {
  ipclock::StoreOptions options;
  options.remove_ipc = ipclock::RemoveIpcPolicy::kIgnore;
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn, options);
  ASSERT_OK(store);
  return *store;
}

// This process's figures for `resource` of `store` (zeros if none).
LockCounters CountersOf(const ipclock::Store& store, const std::string& resource) {
  const std::string name = store.Describe();
  for (const ipclock::StoreMetrics& s : ipclock::SnapshotMetrics().stores) {
    if (s.store != name) continue;
    for (const ipclock::ResourceMetrics& r : s.resources) {
      if (r.resource == resource) return r.counters;
    }
  }
  return LockCounters();
}

bool HasStore(const std::string& name) {
  for (const ipclock::StoreMetrics& s : ipclock::SnapshotMetrics().stores) {
    if (s.store == name) return true;
  }
  return false;
}

// A child that holds `resource` until `release` exists (or is killed).
pid_t HoldInChild(const std::string& dsn, const std::string& resource, const std::string& held,
                  const std::string& release) {
  return ForkChild([=] {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
    if (!store.ok()) return 2;
    absl::StatusOr<ipclock::Lock> lock = ipclock::AcquireLock(*store, resource, absl::Seconds(10));
    if (!lock.ok()) return 3;
    WriteFile(held, "1");
    WaitForFile(release, 30);
    return 0;
  });
}

void test_counts_contention_timeouts_and_holds(void** state) {
  (void)state;
  const std::string dsn = ExpandDsn("shm://{shm}");
  std::shared_ptr<ipclock::Store> store = OpenOrFail(dsn);
  const std::string resource = UniqueResource("metrics");
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource);
  ASSERT_OK(lock);

  // Free: an acquisition that did not wait, held about 50 ms.
  ASSERT_OK(lock->Acquire(absl::Seconds(5)));
  usleep(50 * 1000);
  ASSERT_OK(lock->Release());
  LockCounters c = CountersOf(*store, resource);
  assert_int_equal(c.acquisitions, 1);
  assert_int_equal(c.contended, 0);
  assert_int_equal(c.wait.count, 1);
  assert_int_equal(c.wait.counts[0], 1);  // zero wait
  assert_int_equal(c.hold.count, 1);
  if (c.hold.sum_seconds < 0.045) fail_msg("hold of %f s, slept 50 ms", c.hold.sum_seconds);
  // In the one bucket whose bounds hold it.
  const auto& bounds = ipclock::MetricsBucketBounds();
  for (size_t i = 0; i < ipclock::kMetricsBuckets; ++i) {
    const bool fits = (i == 0 || c.hold.sum_seconds > bounds[i - 1]) &&
                      (i == bounds.size() || c.hold.sum_seconds <= bounds[i]);
    assert_int_equal(c.hold.counts[i], fits ? 1 : 0);
  }

  // Held by another process: a try is a timeout, a short wait too, and a
  // wait that outlasts the holder is contended.
  const std::string held = ScratchFile("held");
  const std::string release = ScratchFile("release");
  const pid_t child = HoldInChild(dsn, resource, held, release);
  if (!WaitForFile(held)) fail_msg("the holder did not start");
  absl::StatusOr<bool> got = lock->TryAcquire();
  ASSERT_OK(got);
  assert_false(*got);
  ASSERT_CODE(lock->Acquire(absl::Milliseconds(20)), absl::StatusCode::kDeadlineExceeded);
  const pid_t releaser = ForkChild([release] {
    usleep(200 * 1000);
    return WriteFile(release, "1") ? 0 : 1;
  });
  ASSERT_OK(lock->Acquire(absl::Seconds(20)));
  ASSERT_OK(lock->Release());
  assert_int_equal(WaitChild(releaser), 0);
  assert_int_equal(WaitChild(child), 0);

  c = CountersOf(*store, resource);
  assert_int_equal(c.acquisitions, 2);
  assert_int_equal(c.contended, 1);
  assert_int_equal(c.timeouts, 2);
  assert_int_equal(c.wait.count, 2);
  assert_int_equal(c.wait.counts[0], 1);
  if (c.wait.sum_seconds < 0.1) fail_msg("waited %f s for a holder of 200 ms", c.wait.sum_seconds);
  assert_int_equal(c.owner_deaths, 0);
  assert_int_equal(c.losses, 0);
}

void test_counts_owner_deaths(void** state) {
  (void)state;
  const std::string dsn = ExpandDsn("shm://{shm}");
  std::shared_ptr<ipclock::Store> store = OpenOrFail(dsn);
  const std::string resource = UniqueResource("died");
  const std::string held = ScratchFile("held");
  const pid_t child = HoldInChild(dsn, resource, held, ScratchFile("never"));
  if (!WaitForFile(held)) fail_msg("the holder did not start");
  kill(child, SIGKILL);
  WaitChild(child);
  absl::StatusOr<ipclock::Lock> lock = ipclock::AcquireLock(store, resource, absl::Seconds(10));
  ASSERT_OK(lock);
  assert_true(lock->previous_owner_died());
  assert_int_equal(CountersOf(*store, resource).owner_deaths, 1);
}

void test_counts_a_loss_once(void** state) {
  (void)state;
  std::string dir = MakeTempDir();
  std::shared_ptr<ipclock::Store> store = OpenOrFail(absl::StrCat("flock://", dir));
  const std::string resource = "lost-one";
  absl::StatusOr<ipclock::Lock> lock = ipclock::AcquireLock(store, resource, absl::Seconds(5));
  ASSERT_OK(lock);
  // A watch finds the lock file gone; the release that follows finds it
  // lost too: one loss.
  ipclock::LockWatch watch;
  ipclock::WatchOptions options;
  options.check_interval = absl::Milliseconds(20);
  std::atomic<int> told{0};
  options.diagnostics = [&told](const ipclock::Diagnostic&) { ++told; };
  absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(*std::move(lock), options);
  ASSERT_OK(watched);
  ExpectCode(RunProgram({"sh", "-c", absl::StrCat("rm -f '", dir, "'/sf.lost-one.*.lock")}), 0,
             "rm");
  const double give_up = NowSeconds() + 10;
  while (told.load() == 0 && NowSeconds() < give_up) usleep(5000);
  assert_int_equal(told.load(), 1);
  // Counted when the watch found it, before any release.
  assert_int_equal(CountersOf(*store, resource).losses, 1);
  (void)watched->Release();
  LockCounters c = CountersOf(*store, resource);
  assert_int_equal(c.losses, 1);
  assert_int_equal(c.hold.count, 1);

  // CheckAcquired() finding it lost counts too.
  lock = ipclock::AcquireLock(store, resource, absl::Seconds(5));
  ASSERT_OK(lock);
  ExpectCode(RunProgram({"sh", "-c", absl::StrCat("rm -f '", dir, "'/sf.lost-one.*.lock")}), 0,
             "rm");
  ASSERT_CODE(lock->CheckAcquired(), absl::StatusCode::kAborted);
  ASSERT_OK(lock->Release());
  assert_int_equal(CountersOf(*store, resource).losses, 2);
}

// The in-memory store whose next try (an Acquire with its deadline passed)
// meets a transient fault, as a server between connections gives one: a
// fault injected into a real store, for the Lock's handling of it.
class FlakyTryStore final : public ForwardingStore {
 public:
  FlakyTryStore() : ForwardingStore("flaky-try", ipclock::NewInMemoryStore()) {}
  absl::StatusOr<bool> Acquire(ipclock::Key& key, ipclock::LockMode mode,
                            ipclock::Deadline d) override {
    if (d.has_passed() && fail_next_try.exchange(false)) {
      return absl::UnavailableError("flaky-try: connection lost");
    }
    return ForwardingStore::Acquire(key, mode, d);
  }
  absl::Status Extend(ipclock::Key& key, absl::Duration ttl) override {
    return ipclock::StoreCalls::Extend(inner(), key, ttl);
  }

  std::atomic<bool> fail_next_try{false};
};

void test_a_wait_outlives_a_transient_fault_of_its_first_try(void** state) {
  (void)state;
  // With metrics on, a blocking acquisition starts with a try; a transient
  // fault there must not end a wait that has its whole deadline left.
  auto store = std::make_shared<FlakyTryStore>();
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, "flaky");
  ASSERT_OK(lock);
  store->fail_next_try = true;
  ASSERT_OK(lock->Acquire(absl::Seconds(5)));
  assert_false(store->fail_next_try.load());  // the try did meet the fault
  ASSERT_OK(lock->Release());
  // A try-lock has no deadline left: it reports the fault.
  store->fail_next_try = true;
  ASSERT_CODE(lock->TryAcquire(), absl::StatusCode::kUnavailable);
}

// A flock store that records, for each Acquire, whether it was a try and
// whether the key said a try had just been made.
class RecordingStore final : public ForwardingStore {
 public:
  explicit RecordingStore(std::shared_ptr<ipclock::Store> inner)
      : ForwardingStore("recording", inner) {
    SetMetricsMode(inner->metrics_mode());
  }
  absl::StatusOr<bool> Acquire(ipclock::Key& key, ipclock::LockMode mode,
                            ipclock::Deadline d) override {
    absl::StrAppend(&calls, d.has_passed() ? "try" : "wait",
                    key.tried_just_now() ? "(after a try) " : " ");
    return ForwardingStore::Acquire(key, mode, d);
  }
  std::string calls;
};

void test_a_contended_acquisition_tries_once_then_waits(void** state) {
  (void)state;
  const std::string dir = MakeTempDir();
  const std::string dsn = absl::StrCat("flock://", dir, "?removeipc=ignore");
  const std::string resource = UniqueResource("once");
  for (const char* metrics : {"on", "off"}) {
    auto store = std::make_shared<RecordingStore>(OpenOrFail(absl::StrCat(dsn, "&metrics=", metrics)));
    int told = 0;
    ipclock::LockOptions options;
    options.on_wait = [&told](const ipclock::Lock& lock) {
      ++told;
      assert_false(lock.is_acquired());
    };
    absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource, options);
    ASSERT_OK(lock);
    // Free: one try, nothing told.
    ASSERT_OK(lock->Acquire(absl::Seconds(5)));
    assert_string_equal(store->calls.c_str(), "try ");
    assert_int_equal(told, 0);
    ASSERT_OK(lock->Release());
    // Held by a child until it is told to let go: one try, told once, then
    // the store's wait, which knows the try was just made (flock then
    // blocks without trying again).
    const std::string held = ScratchFile("held");
    const std::string release = ScratchFile("release");
    pid_t child = HoldInChild(dsn, resource, held, release);
    WaitForFile(held, 30);
    store->calls.clear();
    pid_t releaser = ForkChild([release] {
      usleep(200 * 1000);
      WriteFile(release, "1");
      return 0;
    });
    ASSERT_OK(lock->Acquire(absl::Seconds(20)));
    assert_string_equal(store->calls.c_str(), "try wait(after a try) ");
    assert_int_equal(told, 1);
    assert_int_equal(WaitChild(child), 0);
    assert_int_equal(WaitChild(releaser), 0);
    if (std::string(metrics) == "on") {
      const LockCounters c = CountersOf(*store, resource);
      assert_int_equal(c.contended, 1);
      assert_int_equal(c.timeouts, 0);
    }
    ASSERT_OK(lock->Release());
  }
  // Neither metrics nor on_wait: the store's wait alone, which tries first.
  auto store = std::make_shared<RecordingStore>(OpenOrFail(absl::StrCat(dsn, "&metrics=off")));
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource);
  ASSERT_OK(lock);
  ASSERT_OK(lock->Acquire(absl::Seconds(5)));
  assert_string_equal(store->calls.c_str(), "wait ");
}

void test_modes(void** state) {
  (void)state;
  // on: the fast path (reused handle, TryAcquire) times one hold in 64,
  // the first of the cell always; every: each one.
  for (const char* mode : {"on", "every", "off"}) {
    const std::string dsn = ExpandDsn(absl::StrCat("shm://{shm}?metrics=", mode));
    std::shared_ptr<ipclock::Store> store = OpenOrFail(dsn);
    absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, "loop");
    ASSERT_OK(lock);
    for (int i = 0; i < 200; ++i) {
      assert_true(TryOrFail(*lock));
      ASSERT_OK(lock->Release());
    }
    if (std::string(mode) == "off") {
      assert_false(HasStore(store->Describe()));
      continue;
    }
    LockCounters c = CountersOf(*store, "loop");
    assert_int_equal(c.acquisitions, 200);
    assert_int_equal(c.wait.count, 200);
    assert_int_equal(c.hold.count, std::string(mode) == "on" ? 4 : 200);
  }
  // A bad value is refused, naming the option.
  absl::StatusOr<std::shared_ptr<ipclock::Store>> bad =
      ipclock::StoreFromDsn("in-memory:?metrics=sometimes");
  ASSERT_CODE(bad, absl::StatusCode::kInvalidArgument);
  if (!absl::StrContains(bad.status().message(), "metrics=sometimes")) {
    fail_msg("message: %s", bad.status().ToString().c_str());
  }
}

void test_resources_past_the_cap_are_pooled(void** state) {
  (void)state;
  std::shared_ptr<ipclock::Store> store = OpenOrFail("in-memory");
  for (size_t i = 0; i < ipclock::kMaxMetricsResources + 5; ++i) {
    absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, absl::StrCat("r", i));
    ASSERT_OK(lock);
    assert_true(TryOrFail(*lock));
  }
  for (const ipclock::StoreMetrics& s : ipclock::SnapshotMetrics().stores) {
    if (s.store != store->Describe()) continue;
    assert_int_equal(s.resources.size(), ipclock::kMaxMetricsResources);
    assert_true(s.has_other_resources);
    assert_int_equal(s.other_resources.acquisitions, 5);
    assert_int_equal(s.Total().acquisitions, ipclock::kMaxMetricsResources + 5);
    return;
  }
  fail_msg("no metrics for %s", store->Describe().c_str());
}

void test_text_for_prometheus(void** state) {
  (void)state;
  std::shared_ptr<ipclock::Store> store = OpenOrFail(ExpandDsn("shm://{shm}"));
  // A name that needs escaping: a quote, a backslash, a newline, a byte
  // that is not UTF-8.
  const std::string odd = std::string("q\"b\\n\nx\xff", 8);
  for (const std::string& resource : {std::string("plain"), odd}) {
    absl::StatusOr<ipclock::Lock> lock = ipclock::AcquireLock(store, resource, absl::Seconds(5));
    ASSERT_OK(lock);
  }
  const ipclock::MetricsSnapshot snapshot = ipclock::SnapshotMetrics();
  const std::string om = ipclock::WriteOpenMetrics(snapshot);
  const std::string label = absl::StrCat("{store=\"", store->Describe(), "\",resource=\"plain\"}");
  ExpectContains(om, "# TYPE ipclock_acquisitions counter\n", "OpenMetrics counter family");
  ExpectContains(om, absl::StrCat("ipclock_acquisitions_total", label, " 1\n"), "counter");
  ExpectContains(om, "# UNIT ipclock_wait_seconds seconds\n", "unit");
  ExpectContains(om, absl::StrCat("ipclock_hold_seconds_count", label, " 1\n"), "hold count");
  ExpectContains(om, "resource=\"q\\\"b\\\\n\\nx\\\\xff\"", "escaped name");
  if (!absl::EndsWith(om, "# EOF\n")) fail_msg("no # EOF");

  const std::string prom = ipclock::WriteOpenMetrics(snapshot, ipclock::MetricsTextFormat::kPrometheus);
  ExpectContains(prom, "# TYPE ipclock_acquisitions_total counter\n", "Prometheus counter");
  ExpectContains(prom, "le=\"+Inf\"", "buckets");
  const std::string file = ScratchFile("metrics.prom");
  WriteFile(file, prom);
  const std::string promtool = FindInPath("promtool");
  if (promtool.empty()) {
    if (getenv("CI") != nullptr) fail_msg("promtool (Debian's prometheus) is not installed");
    fprintf(stderr, "no promtool: the text's syntax is not checked\n");
    return;
  }
  CliResult check =
      RunProgram({"sh", "-c", absl::StrCat(promtool, " check metrics < '", file, "'")});
  ExpectCode(check, 0, "promtool check metrics");
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts_contention_timeouts_and_holds),
      cmocka_unit_test(test_a_contended_acquisition_tries_once_then_waits),
      cmocka_unit_test(test_counts_owner_deaths),
      cmocka_unit_test(test_counts_a_loss_once),
      cmocka_unit_test(test_modes),
      cmocka_unit_test(test_a_wait_outlives_a_transient_fault_of_its_first_try),
      cmocka_unit_test(test_resources_past_the_cap_are_pooled),
      cmocka_unit_test(test_text_for_prometheus),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
