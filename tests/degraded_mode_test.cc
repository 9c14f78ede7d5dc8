// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Degraded mode: a Redis DSN whose server cannot be reached (a closed port)
// or whose store is compiled out, with `fallback=` and each `degraded=`
// policy. The remote store's error is Unavailable when the Redis store is
// built in and Unimplemented when it is not; both switch to the fallback.

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::Store;
using namespace ipclock_test;

// Nothing listens on port 1 of the loopback address.
constexpr char kDeadRedis[] = "redis://127.0.0.1:1";

// Skips (before any object is made) unless building the dead Redis store
// fails as degraded mode expects: a store that connects only on first use
// cannot be replaced at creation.
void SkipUnlessRemoteFailsAtCreation() {
  absl::StatusCode code = ipclock::StoreFromDsn(kDeadRedis).status().code();
  if (code != absl::StatusCode::kUnavailable &&
      code != absl::StatusCode::kUnimplemented) {
    print_message("%s gives %s at creation: nothing to fall back from\n",
                  kDeadRedis, absl::StatusCodeToString(code).c_str());
    skip();
  }
}

absl::StatusOr<std::shared_ptr<Store>> Build(const std::string& query) {
  return ipclock::StoreFromDsn(absl::StrCat(kDeadRedis, "?", query));
}

std::shared_ptr<Store> Degraded(const std::string& query) {
  absl::StatusOr<std::shared_ptr<Store>> store = Build(query);
  if (!store.ok()) fail_msg("%s?%s: %s", kDeadRedis, query.c_str(), store.status().ToString().c_str());
  return *store;
}

// Builds the store for `query` and takes and releases a fresh resource `n`
// times, checking that a second lock is kept out each time. Returns what
// went wrong, or "": it runs while stderr is captured, where an assertion's
// message would be lost.
std::string UseLocks(const std::string& query, int n) {
  absl::StatusOr<std::shared_ptr<Store>> store = Build(query);
  if (!store.ok()) return store.status().ToString();
  for (int i = 0; i < n; ++i) {
    std::string r = UniqueResource("degraded");
    absl::StatusOr<Lock> lock = Lock::Create(*store, r);
    absl::StatusOr<Lock> rival = Lock::Create(*store, r);
    if (!lock.ok() || !rival.ok()) return "Lock::Create failed";
    absl::StatusOr<bool> got = lock->TryAcquire();
    if (!got.ok() || !*got) return "TryAcquire did not acquire";
    absl::StatusOr<bool> rival_got = rival->TryAcquire();
    if (!rival_got.ok() || *rival_got) return "the rival was not kept out";
    if (!lock->Release().ok()) return "Release failed";
  }
  return "";
}

// What three uses of the in-memory fallback with `degraded=mode` write to
// stderr; the uses themselves must go right.
std::string StderrOfUses(const char* mode) {
  std::string problem;
  std::string out = CaptureStderr(
      [&] { problem = UseLocks(absl::StrCat("fallback=in-memory&degraded=", mode), 3); });
  assert_string_equal(problem.c_str(), "");
  return out;
}

size_t CountLines(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

void RaiseIsTheDefault(void**) {
  SkipUnlessRemoteFailsAtCreation();
  const absl::StatusCode remote = ipclock::StoreFromDsn(kDeadRedis).status().code();
  for (const char* query : {"fallback=in-memory", "fallback=in-memory&degraded=raise"}) {
    absl::Status s =
        ipclock::StoreFromDsn(absl::StrCat(kDeadRedis, "?", query)).status();
    assert_int_equal(s.code(), remote);
    // The remote store's own error, not one about the fallback.
    assert_false(absl::StrContains(s.message(), "fallback"));
  }
}

void WarnReportsEveryAcquisition(void**) {
  SkipUnlessRemoteFailsAtCreation();
  const std::string out = StderrOfUses("warn");
  // Every acquisition attempt is a use: three locks and their three rivals.
  assert_int_equal(CountLines(out, "ipclock: warning:"), 6);
  assert_true(absl::StrContains(out, "does not exclude processes on other hosts"));
  std::shared_ptr<Store> store = Degraded("fallback=in-memory&degraded=warn");
  assert_true(absl::StrContains(store->Describe(), "fallback for redis://127.0.0.1:1"));
}

void WarnThrottledReportsOnce(void**) {
  SkipUnlessRemoteFailsAtCreation();
  assert_int_equal(CountLines(StderrOfUses("warn_throttled"), "ipclock: warning:"), 1);
}

void ProceedIsSilent(void**) {
  SkipUnlessRemoteFailsAtCreation();
  assert_string_equal(StderrOfUses("proceed").c_str(), "");
}

void FlockFallbackIsTheNamedDir(void**) {
  SkipUnlessRemoteFailsAtCreation();
  std::string dir = MakeTempDir();
  // The fallback's DSN is percent-encoded ("flock:///dir?record=false").
  std::string encoded = absl::StrCat("flock%3A%2F%2F", dir, "%3Frecord%3Dfalse");
  std::shared_ptr<Store> store =
      Degraded(absl::StrCat("fallback=", encoded, "&degraded=proceed"));
  assert_true(absl::StrContains(store->Describe(), dir));
  assert_false(store->capabilities().fencing);  // record=false reached it
  std::string r = UniqueResource("flockfb");
  absl::StatusOr<Lock> lock = Lock::Create(store, r);
  ASSERT_OK(lock);
  ASSERT_OK(lock->Acquire(absl::Seconds(5)));
  // A plain flock store on the same dir sees the lock.
  absl::StatusOr<std::shared_ptr<Store>> plain =
      ipclock::StoreFromDsn(absl::StrCat("flock://", dir));
  ASSERT_OK(plain);
  absl::StatusOr<Lock> rival = Lock::Create(*plain, r);
  ASSERT_OK(rival);
  absl::StatusOr<bool> got = rival->TryAcquire();
  ASSERT_OK(got);
  assert_false(*got);
}

void OnlyUnavailableOrUnimplementedFallBack(void**) {
  // A store that is up is used as it is, its own options intact.
  absl::StatusOr<std::shared_ptr<Store>> up =
      ipclock::StoreFromDsn("in-memory?fallback=flock&degraded=warn");
  ASSERT_OK(up);
  assert_false(absl::StrContains((*up)->Describe(), "fallback"));
  // A mistake is not hidden behind the fallback.
  ASSERT_CODE(ipclock::StoreFromDsn("flock://relative?fallback=in-memory&degraded=proceed"),
              absl::StatusCode::kInvalidArgument);
}

void BadDegradedOptions(void**) {
  const auto kBad = absl::StatusCode::kInvalidArgument;
  ASSERT_CODE(ipclock::StoreFromDsn("redis://127.0.0.1:1?degraded=warn"), kBad);
  ASSERT_CODE(ipclock::StoreFromDsn("redis://127.0.0.1:1?fallback=in-memory&degraded=loud"), kBad);
  ASSERT_CODE(ipclock::StoreFromDsn("redis://127.0.0.1:1?fallback=in-memory%3Ffallback%3Dflock"
                                    "&degraded=warn"),
              kBad);
  ASSERT_CODE(ipclock::StoreFromDsn("redis://127.0.0.1:1?fallback=no%20such&degraded=warn"), kBad);
}

// Option names are percent-decoded once, by the DSN parser, and every later
// step reads the parsed options: an encoded "fallback" or "degraded" is that
// option, wherever it appears (it once sent the DSN back to the factory as
// text, which read it again, without end).
void EncodedOptionNamesAreTheSameOptions(void**) {
  for (const char* dsn : {"in-memory?fall%62ack=flock", "in-memory?fallback=flock&de%67raded=warn",
                          "combined:?store1=in-memory%3Ffall%2562ack%3Dflock&store2=in-memory"}) {
    absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
    if (!store.ok()) fail_msg("%s: %s", dsn, store.status().ToString().c_str());
  }
  ASSERT_CODE(ipclock::StoreFromDsn("redis://127.0.0.1:1?de%67raded=warn"),
              absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("redis://127.0.0.1:1?fallback=in-memory%3Ff%61llback%3Dflock"
                                    "&degraded=warn"),
              absl::StatusCode::kInvalidArgument);
  SkipUnlessRemoteFailsAtCreation();
  std::shared_ptr<Store> store = Degraded("fall%62ack=in-memory&de%67raded=proceed");
  assert_true(absl::StrContains(store->Describe(), "fallback for redis://127.0.0.1:1"));
  // The remote store is named without the degraded-mode options.
  assert_false(absl::StrContains(store->Describe(), "%62"));
  assert_false(absl::StrContains(store->Describe(), "proceed"));
  // metrics= is a setting of this process, not a part of the remote's name.
  store = Degraded("fallback=in-memory&degraded=warn&metrics=off");
  assert_string_equal(store->Describe().c_str(), "in-memory (fallback for redis://127.0.0.1:1)");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(RaiseIsTheDefault),
      cmocka_unit_test(WarnReportsEveryAcquisition),
      cmocka_unit_test(WarnThrottledReportsOnce),
      cmocka_unit_test(ProceedIsSilent),
      cmocka_unit_test(FlockFallbackIsTheNamedDir),
      cmocka_unit_test(OnlyUnavailableOrUnimplementedFallBack),
      cmocka_unit_test(BadDegradedOptions),
      cmocka_unit_test(EncodedOptionNamesAreTheSameOptions),
  };
  return cmocka_run_group_tests_name("degraded_mode", tests, nullptr, nullptr);
}
