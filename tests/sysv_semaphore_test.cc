// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The SysV semaphore store: Symfony's key vectors, DSN options, no set left
// behind, owner death after kill -9, exclusion and counting between
// processes, a set removed under a waiter (as Symfony's release does), timed
// waits, and interop with PHP's Symfony SemaphoreStore
// (tests/php/semaphore_peer.php; skipped, saying why, without php-cli,
// sysvsem or php-symfony-lock).

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ipclock_config.h"
#include "core/lock_access.h"
#include "ipclock/lock.h"
#include "ipclock/semaphore_store.h"
#include "ipclock/store.h"
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace {

using ipclock::Lock;
using ipclock::LockOptions;
using ipclock::SemaphoreKeyScheme;
using ipclock::Store;
using namespace ipclock_test;

std::shared_ptr<Store> OpenStore(const std::string& dsn = "semaphore") {
  absl::StatusOr<std::shared_ptr<Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) {
    fail_msg("StoreFromDsn(%s): %s", dsn.c_str(), store.status().ToString().c_str());
  }
  return *store;
}

Lock MakeLock(const std::shared_ptr<Store>& store, const std::string& resource,
              uint32_t permits = 1) {
  LockOptions options;
  options.permits = permits;
  absl::StatusOr<Lock> lock = Lock::Create(store, resource, options);
  if (!lock.ok()) fail_msg("Lock::Create: %s", lock.status().ToString().c_str());
  return *std::move(lock);
}

bool Try(Lock& lock) {
  absl::StatusOr<bool> got = lock.TryAcquire();
  if (!got.ok()) fail_msg("TryAcquire: %s", got.status().ToString().c_str());
  return *got;
}

int32_t KeyOf(const std::string& resource) {
  return *ipclock::SemaphoreIpcKey(resource, SemaphoreKeyScheme::kMd5);
}

// Whether a set exists for the resource's key (semget without IPC_CREAT).
bool SetExists(const std::string& resource) {
  return semget(KeyOf(resource), 0, 0) >= 0;
}

// Destroys the Locks: a released Lock keeps its set (it stays attached) until then.
template <typename... Locks>
void Drop(Locks&... locks) {
  (Lock(std::move(locks)), ...);
}

void AssertMessageHas(const absl::Status& s, absl::string_view needle) {
  if (s.message().find(needle) == absl::string_view::npos) {
    fail_msg("expected \"%s\" in: %s", std::string(needle).c_str(), s.ToString().c_str());
  }
}

// --- Keys and options ----------------------------------------------------------

void SymfonyKeyVectors(void**) {
  absl::StatusOr<int32_t> md5 = ipclock::SemaphoreIpcKey("invoice-42", SemaphoreKeyScheme::kMd5);
  ASSERT_OK(md5);
  assert_int_equal(*md5, 1743716640);
  absl::StatusOr<int32_t> xxh3 = ipclock::SemaphoreIpcKey("invoice-42", SemaphoreKeyScheme::kXxh3);
#if IPCLOCK_HAVE_XXHASH
  ASSERT_OK(xxh3);
  assert_int_equal(*xxh3, 538577464);
#else
  ASSERT_CODE(xxh3, absl::StatusCode::kUnimplemented);
#endif
}

void DsnOptions(void**) {
  std::shared_ptr<Store> store = OpenStore("semaphore");
  assert_string_equal(std::string(store->name()).c_str(), "semaphore");
  ipclock::Capabilities c = store->capabilities();
  assert_true(c.blocking && c.counting && c.owner_death);
  assert_false(c.shared || c.expiring || c.serializable || c.fencing);
  assert_true(c.scope == ipclock::Scope::kLocal);
  OpenStore("semaphore:?mode=0666&key_scheme=md5");
#if IPCLOCK_HAVE_XXHASH
  OpenStore("semaphore:?key_scheme=xxh3");
#else
  ASSERT_CODE(ipclock::StoreFromDsn("semaphore:?key_scheme=xxh3"),
              absl::StatusCode::kUnimplemented);
#endif
  ASSERT_CODE(ipclock::StoreFromDsn("semaphore:?permit=3"), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("semaphore:?key_scheme=sha1"),
              absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("semaphore:?mode=0999"), absl::StatusCode::kInvalidArgument);
  ASSERT_CODE(ipclock::StoreFromDsn("semaphore://host"), absl::StatusCode::kInvalidArgument);
}

void KeyIsUnserializableAndNotShared(void**) {
  std::shared_ptr<Store> store = OpenStore();
  Lock lock = MakeLock(store, UniqueResource("ser"));
  assert_true(Try(lock));
  assert_false(ipclock::internal::LockAccess::key(lock).serializable());
  ASSERT_CODE(lock.Serialize(), absl::StatusCode::kFailedPrecondition);
  ASSERT_OK(lock.Release());
  ASSERT_CODE(lock.TryAcquire(ipclock::LockMode::kShared),
              absl::StatusCode::kFailedPrecondition);
}

// --- Cleanup -------------------------------------------------------------------

void NoSetLeftBehind(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("left");
  Lock a = MakeLock(store, resource);
  Lock b = MakeLock(store, resource);
  assert_false(SetExists(resource));
  assert_true(Try(a));
  assert_true(SetExists(resource));
  assert_false(Try(b));  // b stays attached after its failed try
  assert_true(SetExists(resource));
  ASSERT_OK(a.Release());
  assert_true(SetExists(resource));  // a and b still exist
  Drop(a);
  assert_true(SetExists(resource));  // b does
  // Same after a waiter got the lock from a holder in another process.
  Signal locked, release;
  pid_t child = ForkChild([&] {
    Lock c = MakeLock(store, resource);
    if (!c.TryAcquire().value_or(false)) return 2;
    locked.Notify();
    release.Wait(20);
    return c.Release().ok() ? 0 : 3;
  });
  assert_int_equal(locked.Wait(), 'x');
  release.Notify();
  ASSERT_OK(b.Acquire(absl::Seconds(20)));
  assert_int_equal(WaitChild(child), 0);
  ASSERT_OK(b.Release());
  Drop(b);
  assert_int_equal(semget(KeyOf(resource), 0, 0), -1);
  assert_int_equal(errno, ENOENT);
}

// A reused Lock stays attached: acquiring and releasing again neither makes
// nor removes a set (same id, same sem_ctime, which SETVAL at attachment
// would move), and the set goes once the Lock is destroyed.
void ReusedLockKeepsItsSet(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("reuse");
  {
    Lock lock = MakeLock(store, resource);
    assert_true(Try(lock));
    const int semid = semget(KeyOf(resource), 0, 0);
    assert_true(semid >= 0);
    struct semid_ds before;
    assert_int_equal(semctl(semid, 0, IPC_STAT, &before), 0);
    ASSERT_OK(lock.Release());
    for (int i = 0; i < 100; ++i) {
      assert_true(Try(lock));
      assert_int_equal(semget(KeyOf(resource), 0, 0), semid);
      ASSERT_OK(lock.Release());
      assert_int_equal(semget(KeyOf(resource), 0, 0), semid);
    }
    struct semid_ds after;
    assert_int_equal(semctl(semid, 0, IPC_STAT, &after), 0);
    assert_int_equal(after.sem_ctime, before.sem_ctime);
    assert_int_equal(semctl(semid, 1, GETVAL), 1);  // attached: this Lock only
    assert_int_equal(semctl(semid, 0, GETVAL), 1);  // released
    // A fork()ed child that destroys its copy of the Lock must not end the
    // parent's attachment (it has none of the parent's undo records).
    pid_t child = ForkChild([&] {
      Lock copy = std::move(lock);
      return 0;
    });
    assert_int_equal(WaitChild(child), 0);
    assert_int_equal(semctl(semid, 1, GETVAL), 1);
    assert_true(Try(lock));
    assert_int_equal(semget(KeyOf(resource), 0, 0), semid);
    ASSERT_OK(lock.Release());
  }
  assert_int_equal(semget(KeyOf(resource), 0, 0), -1);
  assert_int_equal(errno, ENOENT);
}

// --- Owner death ---------------------------------------------------------------

struct DeathReport {
  std::atomic<int> acquired{-1};
  std::atomic<int> died{-1};
};

void KilledHolderReportsOwnerDeath(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("kill");
  auto* report = SharedMemory<DeathReport>();
  Signal locked, waiting;
  pid_t holder = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    if (!lock.TryAcquire().value_or(false)) return 2;
    locked.Notify();
    for (;;) pause();
  });
  assert_int_equal(locked.Wait(), 'x');
  // A waiter already asleep when the holder dies gets the permit the kernel
  // gives back, and is told.
  pid_t waiter = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    waiting.Notify();
    absl::Status s = lock.Acquire(absl::Seconds(20));
    report->acquired = s.ok() ? 1 : 0;
    report->died = lock.previous_owner_died() ? 1 : 0;
    return lock.Release().ok() ? 0 : 3;
  });
  assert_int_equal(waiting.Wait(), 'x');
  usleep(100 * 1000);
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
  assert_int_equal(WaitChild(waiter), 0);
  assert_int_equal(report->acquired.load(), 1);
  assert_int_equal(report->died.load(), 1);
  // The waiter released cleanly: the next holder is not told of a death.
  Lock next = MakeLock(store, resource);
  assert_true(Try(next));
  assert_false(next.previous_owner_died());
  ASSERT_OK(next.Release());

  // Nobody waiting: the set outlives its dead holder, and the next one to
  // come is told; the set goes once no Lock on it exists.
  holder = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    if (!lock.TryAcquire().value_or(false)) return 2;
    locked.Notify();
    for (;;) pause();
  });
  assert_int_equal(locked.Wait(), 'x');
  kill(holder, SIGKILL);
  assert_int_equal(WaitChild(holder), 128 + SIGKILL);
  assert_true(SetExists(resource));
  Lock after = MakeLock(store, resource);
  assert_true(Try(after));
  assert_true(after.previous_owner_died());
  ASSERT_OK(after.Release());
  Drop(after, next);
  assert_false(SetExists(resource));
}

// --- Exclusion and counting ----------------------------------------------------

struct Counter {
  std::atomic<int> inside{0};
  std::atomic<int> max_inside{0};
  std::atomic<int> overlaps{0};
  long value = 0;  // updated only under the lock, without atomics on purpose
};

void NoLostUpdates(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("count");
  auto* c = SharedMemory<Counter>();
  constexpr int kProcs = 4, kRounds = 300;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    kids.push_back(ForkChild([&] {
      Lock lock = MakeLock(store, resource);
      for (int i = 0; i < kRounds; ++i) {
        if (!lock.Acquire(absl::Seconds(30)).ok()) return 2;
        if (c->inside.fetch_add(1) != 0) c->overlaps++;
        long v = c->value;
        if (i % 7 == 0) sched_yield();
        c->value = v + 1;
        c->inside.fetch_sub(1);
        if (!lock.Release().ok()) return 3;
      }
      return 0;
    }));
  }
  for (pid_t k : kids) assert_int_equal(WaitChild(k, 120), 0);
  assert_int_equal(c->overlaps.load(), 0);
  assert_int_equal(c->value, kProcs * kRounds);
  assert_false(SetExists(resource));
}

void CountingPermits(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("permits");
  auto* c = SharedMemory<Counter>();
  constexpr int kPermits = 3, kProcs = 6, kRounds = 20;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    kids.push_back(ForkChild([&] {
      Lock lock = MakeLock(store, resource, kPermits);
      for (int i = 0; i < kRounds; ++i) {
        if (!lock.Acquire(absl::Seconds(30)).ok()) return 2;
        int now = c->inside.fetch_add(1) + 1;
        int seen = c->max_inside.load();
        while (now > seen && !c->max_inside.compare_exchange_weak(seen, now)) {
        }
        usleep(2000);
        c->inside.fetch_sub(1);
        if (!lock.Release().ok()) return 3;
      }
      return 0;
    }));
  }
  for (pid_t k : kids) assert_int_equal(WaitChild(k, 120), 0);
  assert_true(c->max_inside.load() <= kPermits);
  assert_true(c->max_inside.load() >= 2);  // the permits were shared at all
  assert_false(SetExists(resource));
}

void PermitsMismatchIsRefused(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("mismatch");
  Lock three = MakeLock(store, resource, 3);
  assert_true(Try(three));
  Lock two = MakeLock(store, resource, 2);
  absl::StatusOr<bool> got = two.TryAcquire();
  ASSERT_CODE(got, absl::StatusCode::kInvalidArgument);
  AssertMessageHas(got.status(), "permits=2");
  AssertMessageHas(got.status(), "permits=3");
  ASSERT_OK(three.Release());
  Drop(three, two);
  assert_false(SetExists(resource));
}

// --- Removal under a waiter (Symfony's release) ---------------------------------

void WaiterSurvivesSetRemoval(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("rmid");
  Lock holder = MakeLock(store, resource);
  assert_true(Try(holder));
  const int semid = semget(KeyOf(resource), 0, 0);
  assert_true(semid >= 0);
  Signal waiting;
  pid_t waiter = ForkChild([&] {
    Lock lock = MakeLock(store, resource);
    waiting.Notify();
    absl::Status s = lock.Acquire(absl::Seconds(20));
    if (!s.ok()) {
      fprintf(stderr, "waiter: %s\n", s.ToString().c_str());
      return 2;
    }
    return lock.Release().ok() ? 0 : 3;
  });
  assert_int_equal(waiting.Wait(), 'x');
  usleep(200 * 1000);
  // What Symfony's delete() does instead of releasing.
  assert_int_equal(semctl(semid, 0, IPC_RMID), 0);
  assert_int_equal(WaitChild(waiter), 0);
  ASSERT_OK(holder.Release());  // the set is gone: nothing to give back
  assert_false(SetExists(resource));
}

// --- Timed waits ---------------------------------------------------------------

void TimedWaitGivesUpNearDeadline(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("timed");
  Lock holder = MakeLock(store, resource);
  assert_true(Try(holder));
  Lock waiter = MakeLock(store, resource);
  const double start = NowSeconds();
  ASSERT_CODE(waiter.Acquire(absl::Milliseconds(300)), absl::StatusCode::kDeadlineExceeded);
  const double took = NowSeconds() - start;
  if (took < 0.29 || took > 3.0) fail_msg("waited %.3f s for a 0.3 s timeout", took);
  ASSERT_OK(holder.Release());
  Drop(holder, waiter);
  assert_false(SetExists(resource));
}

// Prints what one acquire+release costs, beside a bare semop pair, for the
// report; asserts only that it works.
void AcquireReleaseCost(void**) {
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("cost");
  Lock lock = MakeLock(store, resource);
  constexpr int kRounds = 20000;
  double start = NowSeconds();
  for (int i = 0; i < kRounds; ++i) {
    if (!Try(lock)) fail_msg("not acquired");
    ASSERT_OK(lock.Release());
  }
  const double ours = (NowSeconds() - start) / kRounds;
  int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
  assert_true(id >= 0);
  struct sembuf up = {0, 1, SEM_UNDO}, down = {0, -1, SEM_UNDO};
  semop(id, &up, 1);
  start = NowSeconds();
  for (int i = 0; i < kRounds; ++i) {
    semop(id, &down, 1);
    semop(id, &up, 1);
  }
  const double bare = (NowSeconds() - start) / kRounds;
  semctl(id, 0, IPC_RMID);
  print_message("acquire+release: %.2f us (the Lock stays attached); "
                "bare semop pair: %.2f us\n", ours * 1e6, bare * 1e6);
  // With another process attached and holding one of two permits (the
  // owner-death check is then a GETALL rather than part of the semop).
  const std::string shared = UniqueResource("cost2");
  Signal attached, done;
  pid_t other = ForkChild([&] {
    Lock keep = MakeLock(store, shared, 2);
    if (!keep.TryAcquire().value_or(false)) return 2;
    attached.Notify();
    done.Wait(60);
    return keep.Release().ok() ? 0 : 3;
  });
  assert_int_equal(attached.Wait(), 'x');
  Lock second = MakeLock(store, shared, 2);
  start = NowSeconds();
  for (int i = 0; i < kRounds; ++i) {
    if (!Try(second)) fail_msg("not acquired");
    ASSERT_OK(second.Release());
  }
  const double kept = (NowSeconds() - start) / kRounds;
  print_message("acquire+release, 2 permits, one held by another process: "
                "%.2f us\n", kept * 1e6);
  done.Notify();
  assert_int_equal(WaitChild(other), 0);
  Drop(second);
  assert_false(SetExists(shared));
}

// --- PHP interop ---------------------------------------------------------------

const char* PhpMissing() {
  static std::string why;
  if (FindInPath("php").empty()) {
    why = "php is not installed (apt-get install php-cli php-symfony-lock)";
    return why.c_str();
  }
  const char* autoload = getenv("IPCLOCK_SYMFONY_AUTOLOAD");
  std::string path = autoload != nullptr
                         ? autoload
                         : "/usr/share/php/Symfony/Component/Lock/autoload.php";
  if (!FileExists(path)) {
    why = absl::StrCat("Symfony Lock is not at ", path, " (apt-get install php-symfony-lock)");
    return why.c_str();
  }
  pid_t pid = Spawn({"php", "-r", "exit(extension_loaded('sysvsem') ? 0 : 1);"});
  if (WaitPlain(pid, 30) != 0) {
    why = "php has no sysvsem extension (Debian builds it into php-cli)";
    return why.c_str();
  }
  return nullptr;
}

#define SKIP_WITHOUT_PHP()                                  \
  do {                                                      \
    if (const char* why_missing = PhpMissing()) {           \
      print_message("skipped: %s\n", why_missing);          \
      skip();                                               \
    }                                                       \
  } while (0)

std::string PeerScript() {
  const char* root = getenv("IPCLOCK_SOURCE_ROOT");
  return absl::StrCat(root != nullptr ? root : ".", "/tests/php/semaphore_peer.php");
}

class PhpPeer {
 public:
  PhpPeer(const std::string& resource, const char* mode) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) abort();
    SpawnOptions options;
    options.stdin_fd = in[0];
    options.stdout_fd = out[1];
    pid_ = Spawn({"php", PeerScript(), resource, mode}, options);
    close(in[0]);
    close(out[1]);
    to_php_ = in[1];
    from_php_ = out[0];
  }
  ~PhpPeer() {
    if (to_php_ >= 0) close(to_php_);
    if (from_php_ >= 0) close(from_php_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      WaitPlain(pid_, 5);
    }
  }
  std::string ReadLine(double timeout_sec = 20) {
    std::string line;
    const double until = NowSeconds() + timeout_sec;
    for (;;) {
      struct pollfd p = {from_php_, POLLIN, 0};
      int ms = static_cast<int>((until - NowSeconds()) * 1000);
      if (ms <= 0 || poll(&p, 1, ms) <= 0) return line;
      char c;
      if (read(from_php_, &c, 1) != 1) return line;
      if (c == '\n') return line;
      line.push_back(c);
    }
  }
  // Closes the peer's stdin (a holder then releases) and waits for it.
  int Finish() {
    close(to_php_);
    to_php_ = -1;
    int code = WaitChild(pid_);
    pid_ = -1;
    return code;
  }

 private:
  pid_t pid_ = -1;
  int to_php_ = -1;
  int from_php_ = -1;
};

void PhpHoldsIpclockIsRefused(void**) {
  SKIP_WITHOUT_PHP();
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("php-holds");
  Lock lock = MakeLock(store, resource);
  // The waiter is forked before PHP starts: a child forked later would
  // inherit the pipe to PHP's stdin and keep PHP from seeing its end.
  Signal go, waiting;
  pid_t waiter = ForkChild([&] {
    Lock w = MakeLock(store, resource);
    if (go.Wait(30) != 'x') return 4;
    waiting.Notify();
    absl::Status s = w.Acquire(absl::Seconds(20));
    if (s.ok()) s = w.Release();
    if (!s.ok()) fprintf(stderr, "waiter: %s\n", s.ToString().c_str());
    return s.ok() ? 0 : 2;
  });
  {
    PhpPeer php(resource, "hold");
    assert_string_equal(php.ReadLine().c_str(), "locked");
    assert_false(Try(lock));
    // The waiter must survive Symfony's release, which removes the set.
    go.Notify();
    assert_int_equal(waiting.Wait(), 'x');
    usleep(200 * 1000);
    assert_int_equal(php.Finish(), 0);
    assert_int_equal(WaitChild(waiter), 0);
  }
  assert_true(Try(lock));
  ASSERT_OK(lock.Release());
  Drop(lock);
  assert_false(SetExists(resource));
}

void IpclockHoldsPhpIsRefused(void**) {
  SKIP_WITHOUT_PHP();
  std::shared_ptr<Store> store = OpenStore();
  const std::string resource = UniqueResource("ipclock-holds");
  Lock lock = MakeLock(store, resource);
  assert_true(Try(lock));
  {
    PhpPeer php(resource, "try");
    assert_string_equal(php.ReadLine().c_str(), "busy");
    assert_int_equal(php.Finish(), 0);
  }
  {
    // PHP waits in sem_acquire; our release wakes it.
    PhpPeer php(resource, "wait");
    usleep(300 * 1000);
    ASSERT_OK(lock.Release());
    assert_string_equal(php.ReadLine().c_str(), "acquired");
    assert_int_equal(php.Finish(), 0);
  }
  {
    PhpPeer php(resource, "try");
    assert_string_equal(php.ReadLine().c_str(), "acquired");
    assert_int_equal(php.Finish(), 0);
  }
  // Symfony removed the set on its release.
  assert_false(SetExists(resource));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(SymfonyKeyVectors),
      cmocka_unit_test(DsnOptions),
      cmocka_unit_test(KeyIsUnserializableAndNotShared),
      cmocka_unit_test(NoSetLeftBehind),
      cmocka_unit_test(ReusedLockKeepsItsSet),
      cmocka_unit_test(KilledHolderReportsOwnerDeath),
      cmocka_unit_test(NoLostUpdates),
      cmocka_unit_test(CountingPermits),
      cmocka_unit_test(PermitsMismatchIsRefused),
      cmocka_unit_test(WaiterSurvivesSetRemoval),
      cmocka_unit_test(TimedWaitGivesUpNearDeadline),
      cmocka_unit_test(AcquireReleaseCost),
      cmocka_unit_test(PhpHoldsIpclockIsRefused),
      cmocka_unit_test(IpclockHoldsPhpIsRefused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
