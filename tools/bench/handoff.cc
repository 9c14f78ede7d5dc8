// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "handoff.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ipclock/lock.h"
#include "ipclock_rows.h"
#include "measure.h"

namespace ipclock_bench {

namespace {

// What the two sides of a handoff share. Mapped MAP_SHARED before fork.
struct Board {
  std::atomic<int32_t> ready{0};  // the child is about to wait for round n
  std::atomic<int32_t> done{0};   // the child finished round n
  std::atomic<int32_t> held{0};   // the parent holds the lock for round n
  std::atomic<int32_t> word{0};   // the futex floor's lock word
  std::atomic<int32_t> failed{0};
  std::atomic<int64_t> released_at{0};
  std::atomic<int64_t> start_at{0};
  std::atomic<int64_t> end_at{0};
};

struct Shared {
  Board* board = nullptr;
  int64_t* samples = nullptr;  // one per round or per process
  size_t bytes = 0;

  explicit Shared(size_t slots) {
    bytes = sizeof(Board) + slots * 2 * sizeof(int64_t);
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return;
    board = new (mem) Board;
    samples = reinterpret_cast<int64_t*>(static_cast<char*>(mem) + sizeof(Board));
  }
  ~Shared() {
    if (board != nullptr) munmap(board, bytes);
  }
};

// Waits until `counter` reaches `value`; false if the other side failed.
bool AwaitCount(const Board& b, const std::atomic<int32_t>& counter, int32_t value) {
  while (counter.load(std::memory_order_acquire) < value) {
    if (b.failed.load(std::memory_order_relaxed) != 0) return false;
    sched_yield();
  }
  return true;
}

void LetWaiterSleep() {
  timespec ts = {0, 100000};
  nanosleep(&ts, nullptr);
}

long Futex(std::atomic<int32_t>* word, int op, int32_t val) {
  return syscall(SYS_futex, reinterpret_cast<int32_t*>(word), op, val, nullptr,
                 nullptr, 0);
}

// The first rounds fault pages in and warm caches: not counted.
constexpr int kWarmupRounds = 10;

Latency Summarize(const int64_t* samples, int count) {
  const int skip = count > 10 * kWarmupRounds ? kWarmupRounds : 0;
  std::vector<int64_t> v(samples + skip, samples + count);
  Latency out;
  out.p50_us = Percentile(v, 50) / 1000.0;
  out.p99_us = Percentile(v, 99) / 1000.0;
  out.max_us = static_cast<double>(v.back()) / 1000.0;
  return out;
}

// Says why on stderr, so that a row reading n/a can be explained.
void ChildFailed(Board* b, const absl::Status& why) {
  std::fprintf(stderr, "bench: child %d: %s\n", static_cast<int>(getpid()),
               why.ToString().c_str());
  b->failed.store(1);
  _exit(1);
}

}  // namespace

Latency StoreHandoff(const std::string& dsn, const std::string& resource, int count) {
  Shared shared(count);
  if (shared.board == nullptr) return {};
  Board* b = shared.board;
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(dsn);
  if (!store.ok()) return {};
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(*store, resource);
  if (!lock.ok() || !lock->Acquire().ok()) return {};
  b->held.store(1);
  pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> own = OpenStore(dsn);
    if (!own.ok()) ChildFailed(b, own.status());
    absl::StatusOr<ipclock::Lock> mine = ipclock::Lock::Create(*own, resource);
    if (!mine.ok()) ChildFailed(b, mine.status());
    for (int i = 0; i < count; ++i) {
      // Else the child could take the lock back before the parent does and
      // time a release that happened a round earlier.
      if (!AwaitCount(*b, b->held, i + 1)) _exit(1);
      b->ready.store(i + 1, std::memory_order_release);
      if (absl::Status st = mine->Acquire(); !st.ok()) ChildFailed(b, st);
      shared.samples[i] = NowNs() - b->released_at.load();
      if (absl::Status st = mine->Release(); !st.ok()) ChildFailed(b, st);
      b->done.store(i + 1, std::memory_order_release);
    }
    // _exit skips destructors, and a living Lock stays attached to its SysV
    // set or POSIX registry: destroyed here, the last one removes them.
    { ipclock::Lock gone = *std::move(mine); }
    _exit(0);
  }
  bool ok = true;
  for (int i = 0; i < count && ok; ++i) {
    ok = AwaitCount(*b, b->ready, i + 1);
    if (!ok) break;
    LetWaiterSleep();
    b->released_at.store(NowNs());
    absl::Status released = lock->Release();
    ok = released.ok() && AwaitCount(*b, b->done, i + 1);
    absl::Status again = ok ? lock->Acquire() : released;
    if (!again.ok()) std::fprintf(stderr, "bench: handoff: %s\n", again.ToString().c_str());
    ok = ok && again.ok();
    b->held.store(i + 2, std::memory_order_release);
  }
  if (!ok) b->failed.store(1);  // lets a waiting child go
  lock->Release().IgnoreError();
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return Summarize(shared.samples, count);
}

Latency FutexHandoff(int count) {
  Shared shared(count);
  if (shared.board == nullptr) return {};
  Board* b = shared.board;
  pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    for (int i = 0; i < count; ++i) {
      b->ready.store(i + 1, std::memory_order_release);
      int32_t seen;
      while ((seen = b->word.load(std::memory_order_acquire)) < i + 1) {
        Futex(&b->word, FUTEX_WAIT, seen);
      }
      shared.samples[i] = NowNs() - b->released_at.load();
      b->done.store(i + 1, std::memory_order_release);
    }
    _exit(0);
  }
  bool ok = true;
  for (int i = 0; i < count && ok; ++i) {
    ok = AwaitCount(*b, b->ready, i + 1);
    if (!ok) break;
    LetWaiterSleep();
    b->released_at.store(NowNs());
    b->word.store(i + 1, std::memory_order_release);
    Futex(&b->word, FUTEX_WAKE, 1);
    ok = AwaitCount(*b, b->done, i + 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return Summarize(shared.samples, count);
}

Contention Contend(const std::string& dsn, const std::string& resource,
                   int procs, int millis) {
  Shared shared(procs);
  if (shared.board == nullptr) return {};
  Board* b = shared.board;
  std::vector<pid_t> pids;
  for (int p = 0; p < procs; ++p) {
    pid_t pid = fork();
    if (pid < 0) break;
    if (pid == 0) {
      absl::StatusOr<std::shared_ptr<ipclock::Store>> own = OpenStore(dsn);
      if (!own.ok()) ChildFailed(b, own.status());
      absl::StatusOr<ipclock::Lock> mine = ipclock::Lock::Create(*own, resource);
      if (!mine.ok()) ChildFailed(b, mine.status());
      b->ready.fetch_add(1);
      int64_t start;
      while ((start = b->start_at.load()) == 0 || NowNs() < start) sched_yield();
      int64_t ops = 0, worst = 0;
      const int64_t end = b->end_at.load();
      for (int64_t now = NowNs(); now < end; now = NowNs()) {
        if (absl::Status st = mine->Acquire(); !st.ok()) ChildFailed(b, st);
        worst = std::max(worst, NowNs() - now);
        if (absl::Status st = mine->Release(); !st.ok()) ChildFailed(b, st);
        ++ops;
      }
      shared.samples[2 * p] = ops;
      shared.samples[2 * p + 1] = worst;
      { ipclock::Lock gone = *std::move(mine); }  // see StoreHandoff
      _exit(0);
    }
    pids.push_back(pid);
  }
  bool ok = static_cast<int>(pids.size()) == procs &&
            AwaitCount(*b, b->ready, procs);
  const int64_t start = NowNs() + 1000000;
  b->end_at.store(start + static_cast<int64_t>(millis) * 1000000);
  b->start_at.store(ok ? start : 1);
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (!ok) return {};
  Contention out;
  int64_t ops = 0, worst = 0;
  for (int p = 0; p < procs; ++p) {
    ops += shared.samples[2 * p];
    worst = std::max(worst, shared.samples[2 * p + 1]);
  }
  out.ops_per_sec = static_cast<double>(ops) * 1000.0 / millis;
  out.worst_wait_us = static_cast<double>(worst) / 1000.0;
  return out;
}

}  // namespace ipclock_bench
