// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "inversion.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "ipclock/lock.h"
#include "ipclock_rows.h"
#include "measure.h"
#include "real_time.h"

namespace ipclock_bench {

namespace {

enum Role { kLow, kMiddle, kHigh, kRoles };
constexpr int kPriority[kRoles] = {10, 20, 30};

struct Stage {
  std::atomic<int32_t> ready{0};  // processes set up and about to sleep
  std::atomic<int32_t> go{0};     // futex word
  std::atomic<int64_t> go_ns{0};
  std::atomic<int64_t> waited_ns{-1};
};

long Futex(std::atomic<int32_t>* word, int op, int32_t val) {
  return syscall(SYS_futex, reinterpret_cast<int32_t*>(word), op, val, nullptr, nullptr, 0);
}

void BurnUntil(int64_t end_ns) {
  while (NowNs() < end_ns) {
  }
}

// One role's life in its own process; the exit code says what failed.
int Play(Role role, Stage* stage, const std::string& dsn, const std::string& resource,
         const InversionTimes& times, int cpu) {
  alarm(30);  // the last resort against a process that would spin for ever
  std::unique_ptr<ipclock::Lock> lock;
  if (role != kMiddle) {
    absl::StatusOr<std::shared_ptr<ipclock::Store>> store = OpenStore(dsn);
    if (!store.ok()) return 2;
    absl::StatusOr<ipclock::Lock> made = ipclock::Lock::Create(*store, resource);
    if (!made.ok()) return 2;
    lock = std::make_unique<ipclock::Lock>(*std::move(made));
    if (role == kLow && !lock->TryAcquire().value_or(false)) return 3;
  }
  if (PinRealTime(cpu, kPriority[role]) != 0) return 4;
  stage->ready.fetch_add(1);
  while (stage->go.load() == 0) Futex(&stage->go, FUTEX_WAIT, 0);
  const int64_t go = stage->go_ns.load();
  switch (role) {
    case kLow:
      BurnUntil(go + static_cast<int64_t>(times.critical_section_us * 1000));
      return lock->Release().ok() ? 0 : 5;
    case kMiddle:
      BurnUntil(go + static_cast<int64_t>(times.hog_us * 1000));
      return 0;
    default: {
      const int64_t start = NowNs();
      if (!lock->Acquire(absl::Seconds(10)).ok()) return 5;
      stage->waited_ns = NowNs() - start;
      return lock->Release().ok() ? 0 : 6;
    }
  }
}

}  // namespace

std::string InversionUnavailable() {
  const pid_t pid = fork();
  if (pid < 0) return absl::StrCat("fork: ", strerror(errno));
  if (pid == 0) _exit(PinRealTime(LastAllowedCpu(), kPriority[kLow]));
  int status = 0;
  waitpid(pid, &status, 0);
  const int err = WIFEXITED(status) ? WEXITSTATUS(status) : EINVAL;
  if (err == 0) return "";
  return absl::StrCat("SCHED_FIFO refused (", strerror(err), ")");
}

double InversionWaitMicros(const std::string& dsn, const std::string& resource,
                           const InversionTimes& times) {
  void* mem = mmap(nullptr, sizeof(Stage), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return -1;
  Stage* stage = new (mem) Stage;
  const int cpu = LastAllowedCpu();
  pid_t pids[kRoles] = {-1, -1, -1};
  bool ok = true;
  // The holder first: the others must find the lock taken.
  for (int role = kLow; role < kRoles && ok; ++role) {
    pids[role] = fork();
    if (pids[role] == 0) {
      _exit(Play(static_cast<Role>(role), stage, dsn, resource, times, cpu));
    }
    ok = pids[role] > 0;
    while (ok && stage->ready.load() < role + 1) {
      int status = 0;
      if (waitpid(pids[role], &status, WNOHANG) != 0) ok = false;  // died setting up
      usleep(100);
    }
  }
  stage->go_ns = NowNs();
  stage->go = 1;
  Futex(&stage->go, FUTEX_WAKE, kRoles);
  for (pid_t pid : pids) {
    if (pid <= 0) continue;
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "bench: inversion on %s: a process failed (status %d)\n",
                   dsn.c_str(), status);
      ok = false;
    }
  }
  const double waited = ok ? static_cast<double>(stage->waited_ns.load()) / 1000.0 : -1;
  munmap(mem, sizeof(Stage));
  return waited;
}

}  // namespace ipclock_bench
