// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the two semaphore stores' suites (sysv_semaphore_test.cc,
// posix_semaphore_test.cc) check alike: counting permits between processes
// with a holder killed, permits that disagree, full cycles under kills, and
// a LockWatch reporting a lost lock.

#ifndef IPCLOCK_TESTS_SEMAPHORE_TEST_UTIL_H_
#define IPCLOCK_TESTS_SEMAPHORE_TEST_UTIL_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock/store.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

ipclock::Lock MakeLock(const std::shared_ptr<ipclock::Store>& store,
                       const std::string& resource, uint32_t permits = 1);

// Destroys the Locks.
template <typename... Locks>
void Drop(Locks&... locks) {
  (ipclock::Lock(std::move(locks)), ...);
}

void AssertMessageHas(const absl::Status& s, absl::string_view needle);

// Each DSN `scheme` + one of `tails` is refused as InvalidArgument.
void ExpectBadDsns(absl::string_view scheme, std::initializer_list<const char*> tails);

// What a forked waiter reports, in memory shared with it.
struct DeathReport {
  std::atomic<int> acquired{-1};
  std::atomic<int> died{-1};
  std::atomic<int64_t> acquired_at_ns{0};
};

// A forked child that waits (up to 20 s) for `resource` through `store`,
// notifying `waiting` as it starts, and writes to `report` whether it got
// it, when, and whether it was told of a dead holder; it exits 0 once it has
// let go again, 3 if that failed.
pid_t WaitInChild(const std::shared_ptr<ipclock::Store>& store, const std::string& resource,
                  Signal* waiting, DeathReport* report);

// What another process (forked, with `store` inherited) gets when it tries
// `resource` once: the lock, a busy answer, or an error. It lets go again.
enum class OtherTry { kGot, kBusy, kError };
OtherTry TryInAnotherProcess(const std::shared_ptr<ipclock::Store>& store,
                             const std::string& resource);

// A forked holder of `resource` is killed with SIGKILL while a forked
// waiter waits for it through `store`, and reaped only once the waiter is
// done (a zombie holds nothing either): the waiter must get the lock, told
// of the death, and the next holder here must not be told. Returns how
// long after the kill the waiter got it, in seconds.
double KilledHolderReachesWaiter(const std::shared_ptr<ipclock::Store>& store,
                                 const std::string& resource);

// Three forked users run `use` over and over for 2 s each (a nonzero
// return ends the user with it) while a forked attacker runs `attack`,
// which goes on while `going_on()` says so (until the users are done, or
// 20 s should the test fail first). Fails the test unless every one of
// them exits 0: errors inside are expected, a crash or a hang is not.
void UseWhileAttacked(const std::function<int(const std::function<bool()>& going_on)>& attack,
                      const std::function<int()>& use);

// A user's round for UseWhileAttacked: a fresh store of `dsn` and a Lock on
// `resource` with `permits`, tried `tries` times for up to `wait` each,
// checked and released when got, with `after_try` (if set) after each try.
// Errors and losses are expected; 2 or 3 if the store or the Lock cannot be
// made, else 0.
int TryCheckRelease(const std::string& dsn, const std::string& resource, uint32_t permits,
                    int tries, absl::Duration wait,
                    const std::function<void()>& after_try = nullptr);

// What the tests below need of the store under test, given to each as
// cmocka's state (cmocka_unit_test_prestate).
struct SemaphoreSuite {
  const char* dsn;               // the store's plain DSN
  const char* keep_nothing_dsn;  // the same store, keeping nothing idle
  // Whether any object of `resource` (a set, a semaphore, a registry) is left.
  bool (*objects_left)(const std::string& resource);
  // The store made through its options struct with `keep_idle`: its status.
  absl::Status (*make_with_keep_idle)(size_t keep_idle);
};

// SemaphoreSuite::make_with_keep_idle of the store `New` makes from its
// `Options`.
template <typename Options,
          absl::StatusOr<std::shared_ptr<ipclock::Store>> (*New)(const Options&)>
absl::Status MakeWithKeepIdle(size_t keep_idle) {
  Options options;
  options.keep_idle = keep_idle;
  return New(options).status();
}

// keep_idle is 0 to 4096, through the DSN and the options alike.
void KeepIdleIsBounded(void** state);

// With keep_idle=2, at most two idle objects are kept, the least recently
// used going first; the rest go with the store.
void IdleObjectsAreBoundedByKeepIdle(void** state);

// A child forked while the parent holds the lock has a copy of the Lock: it
// can neither release it (FailedPrecondition) nor, destroying its copy,
// give the parent's permit away; the objects go with the parent's release.
void ForkedChildCannotReleaseParentsLock(void** state);

// Runs the suite's `own` tests, then every shared test of this header on
// `suite`; main's return value.
int RunWithSharedTests(const CMUnitTest* own, size_t count, SemaphoreSuite* suite);
template <size_t N>
int RunWithSharedTests(const CMUnitTest (&own)[N], SemaphoreSuite* suite) {
  return RunWithSharedTests(own, N, suite);
}

// Six processes share three permits: never more holders than permits, and
// more than one at a time. Then a holder of two permits is killed: its
// permit, and only its, comes back, reported as an owner's death.
void CountingPermitsAcrossProcesses(void** state);

// A Lock asking other permits than the holders of the resource made it
// with is refused, naming both.
void PermitsMismatchIsRefused(void** state);

// Four processes take a resource with a full cycle each time (a new Lock,
// so through the store's idle attachments, acquire, a step of work,
// release, destroy) while one of them is killed with SIGKILL every 20 ms
// and replaced, for 3 s. Never two holders at once, no acquisition that
// waits 10 s, no error; every takeover from a killed holder is reported as
// an owner's death. Then one more cycle through the store that keeps
// nothing idle, which leaves no object of the resource behind.
void FullCyclesUnderKills(void** state);

// Watches the held `lock` with `interval` between checks: no report while
// nothing happens; then `lose` takes the lock away, and the watch must
// report it once, within 10 s, with `needle` in its message; the release
// then says Aborted.
void CheckWatchReportsLoss(ipclock::Lock lock, absl::Duration interval,
                           const std::function<void()>& lose, absl::string_view needle);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_SEMAPHORE_TEST_UTIL_H_
