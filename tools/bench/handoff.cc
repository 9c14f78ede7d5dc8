// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ipclock/lock.h"
#include "ipclock_rows.h"
#include "measure.h"
#include "raw_peers.h"

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
  std::atomic<int64_t> acquisitions{0};  // by every contending process
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

// The parent's side of `count` hand-overs: for each, once the waiter is
// ready and asleep, stamps the release time and calls `release(i)`, which
// lets the waiter have it and says whether the hand-over went through.
// False once one did not (or the waiter failed).
template <typename Release>
bool HandOver(Board* b, int count, Release release) {
  for (int i = 0; i < count; ++i) {
    if (!AwaitCount(*b, b->ready, i + 1)) return false;
    LetWaiterSleep();
    b->released_at.store(NowNs());
    if (!release(i)) return false;
  }
  return true;
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
  bool ok = HandOver(b, count, [&](int i) {
    absl::Status released = lock->Release();
    bool handed = released.ok() && AwaitCount(*b, b->done, i + 1);
    absl::Status again = handed ? lock->Acquire() : released;
    if (!again.ok()) std::fprintf(stderr, "bench: handoff: %s\n", again.ToString().c_str());
    b->held.store(i + 2, std::memory_order_release);
    return handed && again.ok();
  });
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
  const bool ok = HandOver(b, count, [&](int i) {
    b->word.store(i + 1, std::memory_order_release);
    Futex(&b->word, FUTEX_WAKE, 1);
    return AwaitCount(*b, b->done, i + 1);
  });
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return Summarize(shared.samples, count);
}

namespace {

// Waits kept per process for the median; the worst counts every wait.
constexpr int64_t kKeptWaits = 1 << 17;

void SleepMicros(int us) {
  struct timespec ts = {0, static_cast<long>(us) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

}  // namespace

Contention ContendWith(const ContentionShape& shape, const ContenderFactory& make) {
  const int procs = shape.procs;
  // Per process: ops, worst, kept count, most overtaken, then its kept waits.
  constexpr size_t kHead = 4;
  const size_t stride = kHead + kKeptWaits;
  Shared shared(static_cast<size_t>(procs) * stride);
  if (shared.board == nullptr) return {};
  Board* b = shared.board;
  std::vector<pid_t> pids;
  for (int p = 0; p < procs; ++p) {
    pid_t pid = fork();
    if (pid < 0) break;
    if (pid == 0) {
      absl::StatusOr<std::unique_ptr<Contender>> mine = make(p);
      if (!mine.ok()) ChildFailed(b, mine.status());
      int64_t* out = shared.samples + static_cast<size_t>(p) * stride;
      int64_t* kept = out + kHead;
      // A sleep of the hold's length, not the kernel's default 50 µs more.
      prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
      b->ready.fetch_add(1);
      int64_t start;
      while ((start = b->start_at.load()) == 0 || NowNs() < start) sched_yield();
      int64_t ops = 0, worst = 0, n = 0, overtaken = 0;
      const int64_t end = b->end_at.load();
      for (int64_t now = NowNs(); now < end; now = NowNs()) {
        const int64_t before = b->acquisitions.load();
        if (absl::Status st = (*mine)->Acquire(); !st.ok()) ChildFailed(b, st);
        const int64_t waited = NowNs() - now;
        overtaken = std::max(overtaken, b->acquisitions.fetch_add(1) - before);
        worst = std::max(worst, waited);
        if (n < kKeptWaits) kept[n++] = waited;
        if (shape.hold_us > 0) SleepMicros(shape.hold_us);
        if (absl::Status st = (*mine)->Release(); !st.ok()) ChildFailed(b, st);
        ++ops;
      }
      out[0] = ops;
      out[1] = worst;
      out[2] = n;
      out[3] = overtaken;
      mine->reset();  // see StoreHandoff
      _exit(0);
    }
    pids.push_back(pid);
  }
  bool ok = static_cast<int>(pids.size()) == procs &&
            AwaitCount(*b, b->ready, procs);
  const int64_t start = NowNs() + 1000000;
  b->end_at.store(start + static_cast<int64_t>(shape.millis) * 1000000);
  b->start_at.store(ok ? start : 1);
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (!ok) return {};
  Contention out;
  int64_t ops = 0, worst = 0;
  std::vector<int64_t> waits;
  for (int p = 0; p < procs; ++p) {
    const int64_t* in = shared.samples + static_cast<size_t>(p) * stride;
    ops += in[0];
    worst = std::max(worst, in[1]);
    out.most_overtaken = std::max(out.most_overtaken, in[3]);
    out.worst_wait_us_by_process.push_back(static_cast<double>(in[1]) / 1000.0);
    waits.insert(waits.end(), in + kHead, in + kHead + in[2]);
  }
  out.ops_per_sec = static_cast<double>(ops) * 1000.0 / shape.millis;
  out.worst_wait_us = static_cast<double>(worst) / 1000.0;
  if (!waits.empty()) out.median_wait_us = Percentile(waits, 50) / 1000.0;
  return out;
}

namespace {

class LockContender final : public Contender {
 public:
  LockContender(ipclock::Lock lock, ipclock::LockMode mode)
      : lock_(std::move(lock)), mode_(mode) {}
  absl::Status Acquire() override { return lock_.Acquire(absl::InfiniteDuration(), mode_); }
  absl::Status Release() override { return lock_.Release(); }

 private:
  ipclock::Lock lock_;
  const ipclock::LockMode mode_;
};

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

class RobustMutexContender final : public Contender {
 public:
  explicit RobustMutexContender(pthread_mutex_t* mu) : mu_(mu) {}
  absl::Status Acquire() override {
    const int rc = pthread_mutex_lock(mu_);
    if (rc == EOWNERDEAD) pthread_mutex_consistent(mu_);
    return rc == 0 || rc == EOWNERDEAD ? absl::OkStatus()
                                       : absl::InternalError("pthread_mutex_lock");
  }
  absl::Status Release() override {
    return pthread_mutex_unlock(mu_) == 0 ? absl::OkStatus()
                                          : absl::InternalError("pthread_mutex_unlock");
  }

 private:
  pthread_mutex_t* const mu_;
};

class FlockContender final : public Contender {
 public:
  explicit FlockContender(int fd) : fd_(fd) {}
  ~FlockContender() override { close(fd_); }
  absl::Status Acquire() override {
    return flock(fd_, LOCK_EX) == 0 ? absl::OkStatus() : Errno("flock(LOCK_EX)");
  }
  absl::Status Release() override {
    return flock(fd_, LOCK_UN) == 0 ? absl::OkStatus() : Errno("flock(LOCK_UN)");
  }

 private:
  const int fd_;
};

class SemopContender final : public Contender {
 public:
  explicit SemopContender(int id) : id_(id) {}
  absl::Status Acquire() override {
    sembuf take = {0, -1, SEM_UNDO};
    return semop(id_, &take, 1) == 0 ? absl::OkStatus() : Errno("semop(-1)");
  }
  absl::Status Release() override {
    sembuf give = {0, 1, SEM_UNDO};
    return semop(id_, &give, 1) == 0 ? absl::OkStatus() : Errno("semop(+1)");
  }

 private:
  const int id_;
};

class PosixSemContender final : public Contender {
 public:
  explicit PosixSemContender(sem_t* sem) : sem_(sem) {}
  absl::Status Acquire() override {
    while (sem_wait(sem_) != 0) {
      if (errno != EINTR) return Errno("sem_wait");
    }
    return absl::OkStatus();
  }
  absl::Status Release() override {
    return sem_post(sem_) == 0 ? absl::OkStatus() : Errno("sem_post");
  }

 private:
  sem_t* const sem_;
};

}  // namespace

Contention Contend(const std::string& dsn, const std::string& resource,
                   const ContentionShape& shape, const std::function<bool(int index)>& shared) {
  return ContendWith(shape, [&](int index) -> absl::StatusOr<std::unique_ptr<Contender>> {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> own = OpenStore(dsn);
    if (!own.ok()) return own.status();
    absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(*own, resource);
    if (!lock.ok()) return lock.status();
    const ipclock::LockMode mode = shared && shared(index) ? ipclock::LockMode::kShared
                                                           : ipclock::LockMode::kExclusive;
    return std::unique_ptr<Contender>(new LockContender(*std::move(lock), mode));
  });
}

Contention ContendRaw(RawPrimitive kind, const std::string& dir, const ContentionShape& shape) {
  switch (kind) {
    case RawPrimitive::kRobustMutex:
    case RawPrimitive::kPiRobustMutex: {
      pthread_mutex_t* mu = MapRobustMutex(kind == RawPrimitive::kPiRobustMutex);
      if (mu == nullptr) return {};
      Contention c = ContendWith(shape, [mu](int) -> absl::StatusOr<std::unique_ptr<Contender>> {
        return std::unique_ptr<Contender>(new RobustMutexContender(mu));
      });
      UnmapRobustMutex(mu);
      return c;
    }
    case RawPrimitive::kFlock: {
      const std::string path = absl::StrCat(dir, "/raw-contend.lock");
      Contention c = ContendWith(shape, [&](int) -> absl::StatusOr<std::unique_ptr<Contender>> {
        // Each process opens the file itself: its own open file description.
        int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) return Errno("open");
        return std::unique_ptr<Contender>(new FlockContender(fd));
      });
      unlink(path.c_str());
      return c;
    }
    case RawPrimitive::kSemop: {
      const int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
      if (id < 0) return {};
      sembuf up = {0, 1, 0};
      semop(id, &up, 1);  // one permit, not undone: it belongs to the set
      Contention c = ContendWith(shape, [id](int) -> absl::StatusOr<std::unique_ptr<Contender>> {
        return std::unique_ptr<Contender>(new SemopContender(id));
      });
      semctl(id, 0, IPC_RMID);
      return c;
    }
    case RawPrimitive::kPosixSem: {
      void* mem = mmap(nullptr, sizeof(sem_t), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (mem == MAP_FAILED) return {};
      auto* sem = static_cast<sem_t*>(mem);
      if (sem_init(sem, /*pshared=*/1, 1) != 0) return {};
      Contention c = ContendWith(shape, [sem](int) -> absl::StatusOr<std::unique_ptr<Contender>> {
        return std::unique_ptr<Contender>(new PosixSemContender(sem));
      });
      sem_destroy(sem);
      munmap(mem, sizeof(sem_t));
      return c;
    }
  }
  return {};
}

}  // namespace ipclock_bench
