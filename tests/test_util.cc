// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/random.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "ipclock/store_factory.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

namespace {

std::mutex g_dirs_mu;
std::vector<std::string>* g_dirs = nullptr;
pid_t g_owner_pid = 0;

void RemoveTempDirs() {
  if (getpid() != g_owner_pid || g_dirs == nullptr) return;
  for (const std::string& d : *g_dirs) {
    std::string cmd = absl::StrCat("rm -rf '", d, "'");
    if (system(cmd.c_str()) != 0) fprintf(stderr, "could not remove %s\n", d.c_str());
  }
}

}  // namespace

std::string UniqueResource(absl::string_view tag) {
  static std::atomic<int> counter{0};
  uint32_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != sizeof(r)) r = static_cast<uint32_t>(time(nullptr));
  return absl::StrFormat("%s-%d-%d-%08x", tag, getpid(), counter++, r);
}

std::string MakeTempDir() {
  char tmpl[] = "/tmp/ipclock-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    perror("mkdtemp");
    abort();
  }
  std::lock_guard<std::mutex> guard(g_dirs_mu);
  if (g_dirs == nullptr) {
    g_dirs = new std::vector<std::string>();
    g_owner_pid = getpid();
    atexit(RemoveTempDirs);
  }
  g_dirs->push_back(tmpl);
  return tmpl;
}

namespace {

// "{env:NAME}" becomes $NAME. A DSN of a server the test scripts did not
// start cannot run: exit 77 (Meson's "skipped"), or fail under CI=true. When
// the value already has a query, a '?' right after the placeholder becomes
// '&', so that "{env:X}?scheme=y" adds an option either way.
std::string ExpandEnv(absl::string_view dsn) {
  std::string out;
  for (;;) {
    size_t open = dsn.find("{env:");
    size_t close = open == absl::string_view::npos ? open : dsn.find('}', open);
    if (close == absl::string_view::npos) break;
    std::string name(dsn.substr(open + 5, close - open - 5));
    const char* value = getenv(name.c_str());
    if (value == nullptr || value[0] == '\0') {
      const bool required = UnderCi();
      fprintf(stderr, "%s: $%s is not set (tools/dev test starts the server "
              "and sets it)\n", required ? "FAILED under CI=true" : "skipped",
              name.c_str());
      exit(required ? 1 : 77);
    }
    absl::StrAppend(&out, dsn.substr(0, open), value);
    dsn.remove_prefix(close + 1);
    if (absl::StartsWith(dsn, "?") && strchr(value, '?') != nullptr) {
      out.push_back('&');
      dsn.remove_prefix(1);
    }
  }
  absl::StrAppend(&out, dsn);
  return out;
}

}  // namespace

std::string ExpandDsn(absl::string_view dsn) {
  std::string out = ExpandEnv(dsn);
  if (out.find("{shm}") != std::string::npos) {
    std::string name = UniqueShmName("dsn");
    out = absl::StrReplaceAll(out, {{"{shm}", name}});
  }
  if (out.find("{tmpdir}") == std::string::npos) return out;
  return absl::StrReplaceAll(out, {{"{tmpdir}", MakeTempDir()}});
}

namespace {

std::vector<std::string>* g_shm_names = nullptr;

void RemoveShmSegments() {
  if (getpid() != g_owner_pid || g_shm_names == nullptr) return;
  for (const std::string& n : *g_shm_names) {
    shm_unlink(absl::StrCat("/ipclock.", n).c_str());  // ENOENT is fine
  }
}

}  // namespace

std::string UniqueShmName(absl::string_view tag) {
  std::string name = UniqueResource(absl::StrCat("test-", tag));
  std::lock_guard<std::mutex> guard(g_dirs_mu);
  if (g_shm_names == nullptr) {
    g_shm_names = new std::vector<std::string>();
    if (g_owner_pid == 0) g_owner_pid = getpid();
    atexit(RemoveShmSegments);
  }
  g_shm_names->push_back(name);
  return name;
}

pid_t ForkChild(const std::function<int()>& body) {
  pid_t pid = FlushedFork();
  if (pid == 0) {
    int code = body();
    _exit(code);
  }
  return pid;
}

int WaitChild(pid_t pid, double timeout_sec) {
  bool timed_out = false;
  const int code = WaitForExit(pid, timeout_sec, &timed_out);
  if (timed_out) fail_msg("child %d still running after %.1f s", pid, timeout_sec);
  if (code < 0) fail_msg("waitpid(%d): %s", pid, strerror(errno));
  return code;
}

namespace {

bool Sleeping(pid_t pid) {
  const std::string line = ReadFileOrEmpty(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'S';
}

}  // namespace

void AwaitWaiting(pid_t pid) {
  // Settled: asleep in at least 16 of the last 20 looks (200 ms). A waiter
  // that wakes now and then to look for a dead holder is seen running in
  // some looks, the more so under qemu-user, where each wake-up is slow;
  // one still on its way to the wait runs in most of them.
  bool seen[20] = {};
  int asleep = 0;
  for (int i = 0; i < 3000; ++i) {
    const bool now = Sleeping(pid);
    asleep += static_cast<int>(now) - static_cast<int>(seen[i % 20]);
    seen[i % 20] = now;
    if (i >= 19 && asleep >= 16) return;
    usleep(10 * 1000);
  }
  fail_msg("process %d never settled into its wait", static_cast<int>(pid));
}

void KillChild(pid_t pid) {
  if (kill(pid, SIGKILL) != 0) fail_msg("kill(%d): %s", pid, strerror(errno));
  assert_int_equal(WaitChild(pid), 128 + SIGKILL);
}

int AsNobody(const std::function<int()>& body) {
  return WaitChild(ForkChild([&] {
    if (setgroups(0, nullptr) != 0 || setresgid(kNobodyUid, kNobodyUid, kNobodyUid) != 0 ||
        setresuid(kNobodyUid, kNobodyUid, kNobodyUid) != 0) {
      return 90;
    }
    return body();
  }));
}

const char* EnvOrNull(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

bool UnderCi() {
  const char* ci = getenv("CI");
  return ci != nullptr && strcmp(ci, "true") == 0;
}

void SkipIf(const char* why, bool fail_instead) {
  if (why == nullptr) return;
  if (fail_instead) fail_msg("%s", why);
  print_message("skipped: %s\n", why);
  skip();
}

const char* RequireEnv(const char* name, const char* starter) {
  if (const char* v = EnvOrNull(name)) return v;
  static std::string why;
  why = absl::StrCat("$", name, " is not set (", starter, ")");
  SkipIf(why.c_str(), UnderCi());
  return nullptr;
}

std::shared_ptr<ipclock::Store> OpenStoreOrFail(const std::string& dsn) {
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  if (!store.ok()) {
    fail_msg("StoreFromDsn(%s): %s", dsn.c_str(), store.status().ToString().c_str());
  }
  return *store;
}

ipclock::Lock LockOrFail(const std::shared_ptr<ipclock::Store>& store,
                         const std::string& resource,
                         const ipclock::LockOptions& options) {
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource, options);
  if (!lock.ok()) fail_msg("Lock::Create: %s", lock.status().ToString().c_str());
  return *std::move(lock);
}

bool TryOrFail(ipclock::Lock& lock, ipclock::LockMode mode) {
  absl::StatusOr<bool> got = lock.TryAcquire(mode);
  if (!got.ok()) fail_msg("TryAcquire: %s", got.status().ToString().c_str());
  return *got;
}

ipclock::Lock HeldOrFail(const std::shared_ptr<ipclock::Store>& store,
                         const std::string& resource,
                         const ipclock::LockOptions& options) {
  ipclock::Lock lock = LockOrFail(store, resource, options);
  if (!TryOrFail(lock)) fail_msg("%s is held, expected it free", resource.c_str());
  return lock;
}

ipclock::Lock HeldSharedOrFail(const std::shared_ptr<ipclock::Store>& store,
                               const std::string& resource,
                               const ipclock::LockOptions& options) {
  ipclock::Lock lock = LockOrFail(store, resource, options);
  if (!TryOrFail(lock, ipclock::LockMode::kShared)) {
    fail_msg("%s is held exclusively, expected it free for readers", resource.c_str());
  }
  return lock;
}

void TakeAndRelease(ipclock::Lock& lock) {
  if (!TryOrFail(lock)) fail_msg("%s is held, expected it free", lock.resource().c_str());
  ASSERT_OK(lock.Release());
}

pid_t HoldInChild(const std::shared_ptr<ipclock::Store>& store, const std::string& resource,
                  Signal* locked, const ipclock::LockOptions& options) {
  return ForkChild([&] {
    absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource, options);
    if (!lock.ok() || !lock->TryAcquire().value_or(false)) return 2;
    locked->Notify();
    for (;;) pause();
  });
}

bool ForkedChildGets(const std::string& dsn, const std::string& resource, ipclock::LockMode mode,
                     absl::Duration wait) {
  pid_t pid = ForkChild([&] {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
    if (!store.ok()) return 2;
    absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(*store, resource);
    if (!lock.ok()) return 2;
    absl::StatusOr<bool> got =
        wait == absl::ZeroDuration() ? lock->TryAcquire(mode) : lock->TryAcquireFor(wait, mode);
    if (!got.ok()) return 3;
    return *got ? 0 : 1;
  });
  int code = WaitChild(pid);
  if (code > 1) fail_msg("child failed with %d", code);
  return code == 0;
}

void ForkedChildIsAnotherHolder(const std::shared_ptr<ipclock::Store>& store,
                                const std::string& resource,
                                const std::function<int(ipclock::Lock&)>& in_child) {
  ipclock::Lock lock = LockOrFail(store, resource);
  assert_true(TryOrFail(lock));
  pid_t child = ForkChild([&] {
    absl::StatusOr<ipclock::Lock> mine = ipclock::Lock::Create(store, resource);
    if (!mine.ok()) return 2;
    absl::StatusOr<bool> got = mine->TryAcquire();
    if (!got.ok() || *got) return 3;  // the parent holds it
    return in_child ? in_child(lock) : 0;
  });
  assert_int_equal(WaitChild(child), 0);
  // The parent's connection, session or lease was not disturbed.
  ASSERT_OK(lock.CheckAcquired());
  ASSERT_OK(lock.Release());
}

void NextHolderIsToldOfTheDeathOnce(const std::shared_ptr<ipclock::Store>& store,
                                    const std::string& resource,
                                    const ipclock::LockOptions& options) {
  ipclock::Lock next = LockOrFail(store, resource, options);
  assert_true(TryOrFail(next));
  assert_true(next.previous_owner_died());
  ASSERT_OK(next.Release());
  ipclock::Lock after = LockOrFail(store, resource, options);
  assert_true(TryOrFail(after));
  assert_false(after.previous_owner_died());
  ASSERT_OK(after.Release());
}

ipclock::WatchedLock WatchQuietly(ipclock::LockWatch& watch, ipclock::Lock lock,
                                  absl::Duration check_interval) {
  ipclock::WatchOptions options;
  options.check_interval = check_interval;
  options.diagnostics = [](const ipclock::Diagnostic&) {};
  absl::StatusOr<ipclock::WatchedLock> watched = watch.Watch(std::move(lock), options);
  ASSERT_OK(watched);
  return *std::move(watched);
}

bool WaitLost(const ipclock::WatchedLock& watched, double seconds) {
  const double until = NowSeconds() + seconds;
  while (!watched.lost() && NowSeconds() < until) absl::SleepFor(absl::Milliseconds(10));
  return watched.lost();
}

void CheckProcessesNeverOverlap(const OverlapCheck& check) {
  struct Shared {
    std::atomic<int> inside{0};
    std::atomic<int> violations{0};
    long counter = 0;
  };
  Shared* shared = SharedMemory<Shared>();
  std::vector<pid_t> pids;
  for (int p = 0; p < check.procs; ++p) {
    pids.push_back(ForkChild([&] {
      absl::StatusOr<ipclock::Lock> lock = check.open(p);
      if (!lock.ok()) return 2;
      for (int i = 0; i < check.iters; ++i) {
        if (!check.take(*lock, p)) return 3;
        if (shared->inside.fetch_add(1) != 0) shared->violations++;
        long seen = shared->counter;
        if (i % check.yield_every == 0) sched_yield();
        shared->counter = seen + 1;
        shared->inside.fetch_sub(1);
        if (!lock->Release().ok()) return 4;
      }
      return 0;
    }));
  }
  for (pid_t pid : pids) assert_int_equal(WaitChild(pid, 60), 0);
  assert_int_equal(shared->violations.load(), 0);
  assert_int_equal(shared->counter, check.procs * check.iters);
}

void CheckDeletedUnderHolderAndWaiter(const DeletedUnderWaiter& check) {
  using ipclock::Lock;
  const std::string& r = check.resource;
  Lock a = LockOrFail(check.store, r);
  assert_true(*a.TryAcquire());
  struct Shared {
    std::atomic<int> c_holding{0};
    std::atomic<int> overlap{0};
    std::atomic<int> b_acquired{0};
  };
  Shared* shared = SharedMemory<Shared>();
  auto lock_in_child = [&](std::shared_ptr<ipclock::Store>* own) -> absl::StatusOr<Lock> {
    *own = check.store;
    if (!check.dsn.empty()) {
      absl::StatusOr<std::shared_ptr<ipclock::Store>> opened = ipclock::StoreFromDsn(check.dsn);
      if (!opened.ok()) return opened.status();
      *own = *opened;
    }
    return Lock::Create(*own, r);
  };
  Signal b_waiting;
  pid_t b = ForkChild([&] {
    std::shared_ptr<ipclock::Store> own;
    absl::StatusOr<Lock> lock = lock_in_child(&own);
    if (!lock.ok()) return 2;
    b_waiting.Notify();
    absl::Status s = lock->Acquire(absl::Seconds(20));
    if (!s.ok()) {
      fprintf(stderr, "B: %s\n", s.ToString().c_str());
      return 3;
    }
    if (shared->c_holding.load() != 0) shared->overlap = 1;
    shared->b_acquired = 1;
    return lock->Release().ok() ? 0 : 4;
  });
  assert_int_equal(b_waiting.Wait(), 'x');
  usleep(100 * 1000);
  check.remove();

  Signal c_locked, c_release;
  pid_t c = ForkChild([&] {
    std::shared_ptr<ipclock::Store> own;
    absl::StatusOr<Lock> lock = lock_in_child(&own);
    if (!lock.ok()) return 2;
    absl::StatusOr<bool> got = lock->TryAcquire();
    if (!got.ok() || !*got) {
      fprintf(stderr, "C: %s\n", got.ok() ? "busy" : got.status().ToString().c_str());
      return 3;
    }
    shared->c_holding = 1;
    c_locked.Notify();
    c_release.Wait(20);
    shared->c_holding = 0;
    return lock->Release().ok() ? 0 : 4;
  });
  assert_int_equal(c_locked.Wait(), 'x');
  check.holder_finds_out(a);
  // A let go of the deleted object too: B gets A's old lock now, and must
  // find it worthless, still waiting behind C.
  usleep(300 * 1000);
  assert_int_equal(shared->b_acquired.load(), 0);
  c_release.Notify();
  assert_int_equal(WaitChild(c), 0);
  assert_int_equal(WaitChild(b), 0);
  assert_int_equal(shared->b_acquired.load(), 1);
  assert_int_equal(shared->overlap.load(), 0);
}

ipclock::LockOptions Ttl(absl::Duration ttl) {
  ipclock::LockOptions options;
  options.ttl = ttl;
  return options;
}

bool IsFree(const std::shared_ptr<ipclock::Store>& store, const std::string& resource) {
  ipclock::Lock probe = LockOrFail(store, resource);
  const bool got = TryOrFail(probe);
  if (got) ASSERT_OK(probe.Release());
  return got;
}

bool IsStillHeld(ipclock::Lock& lock) {
  absl::Status held = lock.CheckAcquired();
  if (held.ok()) return true;
  if (absl::IsAborted(held) || absl::IsFailedPrecondition(held)) return false;
  fail_msg("CheckAcquired: %s", held.ToString().c_str());
  return false;
}

std::string CaptureStderr(const std::function<void()>& fn) {
  char path[] = "/tmp/ipclock-stderr-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) fail_msg("mkstemp: %s", strerror(errno));
  unlink(path);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  fn();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string out;
  char buf[4096];
  ssize_t n;
  lseek(fd, 0, SEEK_SET);
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

Signal::Signal() {
  if (pipe2(fds_, O_CLOEXEC) != 0) {
    perror("pipe2");
    abort();
  }
}

Signal::~Signal() {
  close(fds_[0]);
  close(fds_[1]);
}

void Signal::Notify(char byte) {
  while (write(fds_[1], &byte, 1) < 0 && errno == EINTR) {
  }
}

char Signal::Wait(double timeout_sec) {
  struct pollfd p = {fds_[0], POLLIN, 0};
  int ms = static_cast<int>(timeout_sec * 1000);
  int r;
  do {
    r = poll(&p, 1, ms);
  } while (r < 0 && errno == EINTR);
  if (r <= 0) return 0;
  char byte = 0;
  if (read(fds_[0], &byte, 1) != 1) return 0;
  return byte;
}

bool MakeHoldingMountPrivate(std::string path) {
  for (;;) {
    if (mount(nullptr, path.c_str(), nullptr, MS_PRIVATE, nullptr) == 0) return true;
    if (errno != EINVAL || path == "/") return false;
    path.resize(path.rfind('/'));
    if (path.empty()) path = "/";
  }
}

}  // namespace ipclock_test
