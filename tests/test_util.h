// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers shared by the CMocka suites: status assertions, unique names, temp
// dirs, and forked children that report back through exit codes and pipes.
//
// A forked child must never call a CMocka assertion (its longjmp would land
// in the parent's copy of the test runner): children check with plain ifs and
// leave through ChildExit() with a code the parent asserts on.

#ifndef IPCLOCK_TESTS_TEST_UTIL_H_
#define IPCLOCK_TESTS_TEST_UTIL_H_

#include <signal.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipclock/spi/deadline.h"
#include "ipclock/lock.h"
#include "ipclock/lock_watch.h"

// cmocka.h defines macros (fail, skip, ...) that clash with the C++ library:
// it comes after every other header, and test files include this header last.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// Debian's cmocka.h 1.1 has no extern "C" of its own.
extern "C" {
#include <cmocka.h>
}
// clang-format on

namespace ipclock_test {

// Fails the test with the status message if `s` is not OK.
#define ASSERT_OK(expr)                                                  \
  do {                                                                   \
    const absl::Status _st = ::ipclock_test::AsStatus(expr);             \
    if (!_st.ok()) fail_msg("%s: %s", #expr, _st.ToString().c_str());    \
  } while (0)

// Fails unless `expr`'s status has canonical code `code`.
#define ASSERT_CODE(expr, expected_code)                                      \
  do {                                                                       \
    const absl::Status _st = ::ipclock_test::AsStatus(expr);                 \
    if (_st.code() != (expected_code)) {                                     \
      fail_msg("%s: expected %s, got %s", #expr,                             \
               absl::StatusCodeToString(expected_code).c_str(),              \
               _st.ToString().c_str());                                      \
    }                                                                        \
  } while (0)

// Skips the current test unless it runs as root (it mounts, or acts as
// another user). Call it before creating anything the test would leak.
#define SKIP_UNLESS_ROOT()                                               \
  do {                                                                   \
    if (geteuid() != 0) {                                                \
      fprintf(stderr, "%s: needs root; skipped\n", __func__);           \
      skip();                                                            \
    }                                                                    \
  } while (0)

// $`name`, or nullptr when it is unset or empty.
const char* EnvOrNull(const char* name);

// True under CI=true, where a missing server or tool fails a test instead
// of skipping it.
bool UnderCi();

// Skips the current test, printing "skipped: WHY", when `why` is not
// nullptr; fails it with WHY instead when `fail_instead`. `why` must outlive
// the skip's longjmp: a literal, or text kept in a static.
void SkipIf(const char* why, bool fail_instead = false);

// $`name` (a server's DSN that tools/test-servers sets), or, when it is
// unset, a skip that says so and what `starter` is; a failure under CI=true.
const char* RequireEnv(const char* name,
                       const char* starter = "tools/dev test starts the server");

inline absl::Status AsStatus(const absl::Status& s) { return s; }
template <typename T>
absl::Status AsStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

// A resource name no other test or run shares: "<tag>-<pid>-<n>-<random>".
std::string UniqueResource(absl::string_view tag);

// A fresh 0700 dir under /tmp, removed (with its files) at exit.
std::string MakeTempDir();

// Replaces "{tmpdir}" in `dsn` with a fresh temp dir, "{shm}" with a
// UniqueShmName(), and "{env:NAME}" with $NAME (a server's DSN from
// tools/test-servers). With $NAME unset the process exits 77 (skipped), or 1
// under CI=true; call it before any test runs.
std::string ExpandDsn(absl::string_view dsn);

// A name for an shm store segment (shm://NAME) that no other test or run
// shares; /dev/shm/ipclock.NAME is removed when the test process exits.
std::string UniqueShmName(absl::string_view tag);

// Runs `body` in a forked child, which exits with its return value (or 99 if
// it returns past a crash guard). Returns the child's pid.
pid_t ForkChild(const std::function<int()>& body);

// Waits for `pid`: its exit code, or 128+N if signal N killed it, as shells
// report. Fails the test if it takes longer than `timeout_sec`.
int WaitChild(pid_t pid, double timeout_sec = 30);

// Waits until `pid`, which has told us it is about to wait for a lock (or
// was started to), has slept for 200 ms on end (the state field of
// /proc/PID/stat): it is in the lock's wait by then, whatever the
// machine's load (nothing else in an acquisition sleeps that long).
// Fails the test after 30 s.
void AwaitWaiting(pid_t pid);

// kill -9 on a forked child, and WaitChild, failing the test unless the
// child ended by that signal (it had not exited on its own before).
void KillChild(pid_t pid);

// The uid and gid of `nobody`, the other user of the tests that play an
// attacker or a second user (as root).
constexpr uid_t kNobodyUid = 65534;

// Runs `body` in a forked child that drops to `nobody` (setgroups,
// setresgid, setresuid) and waits for it: `body`'s exit code, or 90 if the
// child could not become nobody.
int AsNobody(const std::function<int()>& body);

// A one-shot signal between processes over a pipe.
class Signal {
 public:
  Signal();
  ~Signal();
  void Notify(char byte = 'x');
  // Waits up to `timeout_sec`; returns the byte sent, or 0 on timeout.
  char Wait(double timeout_sec = 10);

 private:
  int fds_[2];
};

// Memory shared with forked children (MAP_SHARED|MAP_ANONYMOUS).
template <typename T>
T* SharedMemory() {
  void* p = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    abort();
  }
  return new (p) T();
}

// StoreFromDsn, Lock::Create and Lock::TryAcquire that fail the test on an
// error status. TryOrFail returns whether the lock was acquired.
std::shared_ptr<ipclock::Store> OpenStoreOrFail(const std::string& dsn);
ipclock::Lock LockOrFail(const std::shared_ptr<ipclock::Store>& store,
                         const std::string& resource,
                         const ipclock::LockOptions& options = ipclock::LockOptions());
bool TryOrFail(ipclock::Lock& lock, ipclock::LockMode mode = ipclock::LockMode::kExclusive);

// LockOrFail, then TryOrFail that must acquire (failing the test if
// `resource` is held): a Lock that holds `resource`.
ipclock::Lock HeldOrFail(const std::shared_ptr<ipclock::Store>& store,
                         const std::string& resource,
                         const ipclock::LockOptions& options = ipclock::LockOptions());
// The same in shared mode: a Lock that holds `resource` shared.
ipclock::Lock HeldSharedOrFail(const std::shared_ptr<ipclock::Store>& store,
                               const std::string& resource,
                               const ipclock::LockOptions& options = ipclock::LockOptions());

// Takes `lock` at once (failing the test if its resource is held) and
// releases it: the check that a resource is free again.
void TakeAndRelease(ipclock::Lock& lock);

// A forked child that takes `resource` (TryAcquire), notifies `locked` and
// holds it until killed; it exits 2 if it could not take it.
pid_t HoldInChild(const std::shared_ptr<ipclock::Store>& store, const std::string& resource,
                  Signal* locked, const ipclock::LockOptions& options = ipclock::LockOptions());

// Whether a fresh store of `dsn` in a forked child (a process, connection
// and session of its own: another holder's verdict) gets `resource` in
// `mode` at once, or within `wait`. A child that cannot open the store or
// ask fails the test.
bool ForkedChildGets(const std::string& dsn, const std::string& resource,
                     ipclock::LockMode mode = ipclock::LockMode::kExclusive,
                     absl::Duration wait = absl::ZeroDuration());

// Takes `resource` through `store`, then forks a child that must find it
// taken by another holder through the store it inherited (the child has a
// connection, session or lease of its own), and runs `in_child` there with
// the parent's inherited Lock (a nonzero return, from 4 up, fails the
// test). Afterwards the parent still holds the lock, checked with the
// store, and releases it.
void ForkedChildIsAnotherHolder(
    const std::shared_ptr<ipclock::Store>& store, const std::string& resource,
    const std::function<int(ipclock::Lock& inherited)>& in_child = nullptr);

// After a holder of `resource` died holding it: the next holder through
// `store` is told so (previous_owner_died), and the one after it is not.
void NextHolderIsToldOfTheDeathOnce(const std::shared_ptr<ipclock::Store>& store,
                                    const std::string& resource,
                                    const ipclock::LockOptions& options = ipclock::LockOptions());

// Moves `lock` into `watch`, checked every `check_interval`, with the
// watch's diagnostics dropped; fails the test if the watch refuses it.
ipclock::WatchedLock WatchQuietly(ipclock::LockWatch& watch, ipclock::Lock lock,
                                  absl::Duration check_interval = absl::Seconds(1));

// Waits up to `seconds` for the watch to report `watched` lost; whether it
// did.
bool WaitLost(const ipclock::WatchedLock& watched, double seconds = 15);

// Mutual exclusion between processes: `procs` forked children each take a
// lock `iters` times and, holding it, read a counter in shared memory,
// yield every `yield_every` turns, and write it back plus one. Never two
// inside at once, and no update lost. Child `p` gets its lock from
// `open(p)` and takes it with `take(lock, p)` (false: it failed).
struct OverlapCheck {
  int procs = 4;
  int iters = 150;
  int yield_every = 1;
  std::function<absl::StatusOr<ipclock::Lock>(int p)> open;
  std::function<bool(ipclock::Lock& lock, int p)> take;
};
void CheckProcessesNeverOverlap(const OverlapCheck& check);

// What a deletion under a holder and a waiter must come to. A holds
// `resource` through `store`, B (another process) waits for it, `remove`
// deletes what the lock lives in, and C, started afterwards, makes it anew
// and locks it. A learns that its lock protects nothing anymore
// (`holder_finds_out` checks how); B, handed A's lock on the deleted object,
// must notice and queue behind C, never run beside it. With a `dsn`, B and
// C open stores of their own (B's before the deletion, C's after); without,
// they use `store`, inherited.
struct DeletedUnderWaiter {
  std::shared_ptr<ipclock::Store> store;
  std::string dsn;
  std::string resource;
  std::function<void()> remove;
  std::function<void(ipclock::Lock& a)> holder_finds_out;
};
void CheckDeletedUnderHolderAndWaiter(const DeletedUnderWaiter& check);

// LockOptions with `ttl` as the lease.
ipclock::LockOptions Ttl(absl::Duration ttl);

// Whether another Lock on `resource` can take it through `store` right now
// (it gives it back at once).
bool IsFree(const std::shared_ptr<ipclock::Store>& store, const std::string& resource);

// Lock::CheckAcquired() as a bool: true if still held, false if the lock was
// lost (Aborted) or is not acquired (FailedPrecondition); any other status
// fails the test.
bool IsStillHeld(ipclock::Lock& lock);

// Runs `fn` with stderr (fd 2) sent to an unlinked temp file, and returns
// what it wrote there.
std::string CaptureStderr(const std::function<void()>& fn);

// Seconds on the monotonic clock.
inline double NowSeconds() {
  return static_cast<double>(ipclock::Deadline::NowNanos()) / 1e9;
}

// Makes the mount that holds `path` private in this process's (new) mount
// namespace, so that what is mounted on `path` stays in the namespace. That
// is the nearest mount point at or above `path`: a new mount shows wherever
// its parent mount propagates, and nowhere else. False, with errno, when
// none can be: a chroot whose / is not a mount point, with nothing mounted
// on the way (EINVAL), or no right to (EPERM).
bool MakeHoldingMountPrivate(std::string path);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_TEST_UTIL_H_
