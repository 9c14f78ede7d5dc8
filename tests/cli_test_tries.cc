// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Tests of `ipclock run`, run by cli_test.cc's table: a contended `ipclock
// run -w` tries once, then sleeps in the kernel until the holder leaves,
// on flock and on the two semaphore stores. The try tells the CLI whether
// there is a wait to report; a second one, from the store's own wait,
// would find the same holder. strace counts the calls.

#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cli_test.h"
#include "cli_util.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

// Runs a contended `ipclock run -w 20` on `key` of `store` under strace
// (`syscalls`), with a holder from StartCliHolder, until the trace shows
// the waiter in its blocking call (`blocked(trace)`, which sees a call
// that strace has begun to write and the kernel not yet returned); then
// lets the holder go and returns the whole trace. Skips where the wait
// polls instead (`polls(trace)`: no blocking call to count).
std::string TraceContendedRun(const std::string& store, const std::string& key,
                              const std::string& syscalls,
                              const std::function<bool(const std::string&)>& blocked,
                              const std::function<bool(const std::string&)>& polls) {
  const std::string trace = ScratchFile("trace");
  pid_t holder = StartCliHolder({"run", "--store", store, "--key", key});
  pid_t tracer = Spawn(UnderStrace(
      syscalls, trace, WithCli({"run", "--store", store, "-w", "20", "--key", key, "--", "true"})));
  const double t0 = NowSeconds();
  for (;;) {
    const std::string so_far = ReadFileOrEmpty(trace);
    if (blocked(so_far)) break;
    if (polls(so_far)) {
      StopHolder(holder);
      WaitChild(tracer);
      SkipIf("this platform's timed waits poll (no real-time signal for their timer, as "
             "under qemu-user): there is no blocking call to count");
    }
    if (NowSeconds() - t0 > 30) fail_msg("the waiter never blocked:\n%s", so_far.c_str());
    usleep(10 * 1000);
  }
  StopHolder(holder);
  assert_int_equal(WaitChild(tracer), 0);
  return ReadFileOrEmpty(trace);
}

int Occurrences(absl::string_view text, absl::string_view what) {
  int n = 0;
  for (size_t at = text.find(what); at != absl::string_view::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace

// flock: one LOCK_NB try, then a blocking flock(2); with fair=true too
// (whose cancellable wait blocks in slices, each ending in a try of its own).
void test_a_contended_run_tries_once_then_blocks(void** state) {
  (void)state;
  for (const char* options : {"", "&fair=true"}) {
    const std::string store = absl::StrCat(FreshStore(), "?removeipc=ignore", options);
    // A blocking flock: ", LOCK_EX" not followed by "|LOCK_NB". (Not
    // AwaitWaiting(): a fair waiter wakes every 100 ms to look for a
    // cancel, and under ptrace on a busy machine those wake-ups are slow.)
    auto blocked = [](const std::string& so_far) {
      for (size_t at = so_far.find(", LOCK_EX"); at != std::string::npos;
           at = so_far.find(", LOCK_EX", at + 1)) {
        if (so_far.compare(at + 9, 1, "|") != 0) return true;
      }
      return false;
    };
    // Without a real-time signal for the wait's timer (qemu-user), timed
    // flock waits poll with LOCK_NB (platform/timed_flock.h).
    auto polls = [](const std::string& so_far) { return Occurrences(so_far, "LOCK_NB") > 3; };
    const std::string calls = TraceContendedRun(store, "k", "flock", blocked, polls);
    int failed_tries = 0, blocking = 0;
    for (absl::string_view line : absl::StrSplit(calls, '\n')) {
      if (absl::StrContains(line, "LOCK_EX|LOCK_NB") && absl::StrContains(line, "EAGAIN")) {
        if (blocking == 0) ++failed_tries;
      } else if (absl::StrContains(line, "LOCK_EX") && !absl::StrContains(line, "LOCK_NB")) {
        ++blocking;
      }
    }
    if (failed_tries != 1 || blocking < 1) {
      fail_msg("store %s: %d failed LOCK_NB tries and %d blocking calls, expected 1 and "
               "at least 1:\n%s", store.c_str(), failed_tries, blocking, calls.c_str());
    }
  }
}

// SysV: the Lock's try is two semops (one that also checks #4 for a dead
// holder's mark, then the plain one); then the store sleeps in semtimedop
// without IPC_NOWAIT. POSIX: a try that finds the permit taken reads the
// holder's /proc entry (is it alive?); the store's wait then sleeps on the
// semaphore's futex at once. Each extra try of the store's own showed as
// two more semops, or one more read of the holder's /proc entry.
void test_a_contended_run_on_semaphores_tries_once(void** state) {
  (void)state;
  const std::string key = absl::StrCat("tries-", getpid());
  {
    const std::string take = "{sem_num=0, sem_op=-1, sem_flg=SEM_UNDO";
    auto blocked = [&](const std::string& so_far) {
      return Occurrences(so_far, take + "}") > 0;
    };
    auto polls = [](const std::string&) { return false; };
    const std::string calls =
        TraceContendedRun("semaphore", key, "semop,semtimedop", blocked, polls);
    int failed_tries = 0;
    for (absl::string_view line : absl::StrSplit(calls, '\n')) {
      if (absl::StrContains(line, take + "}")) break;
      if (absl::StrContains(line, take + "|IPC_NOWAIT}") && absl::StrContains(line, "EAGAIN")) {
        ++failed_tries;
      }
    }
    if (failed_tries != 2) {
      fail_msg("semaphore: %d failed IPC_NOWAIT semops before the blocking one, expected 2 "
               "(one try):\n%s", failed_tries, calls.c_str());
    }
  }
  {
    auto blocked = [](const std::string& so_far) {
      return absl::StrContains(so_far, "FUTEX_WAIT_BITSET");
    };
    auto polls = [](const std::string&) { return false; };
    const std::string calls =
        TraceContendedRun("posix-semaphore", key, "openat,futex", blocked, polls);
    // Reads of another process's /proc entry before the first sleep: at
    // most one while attaching (the registry's other users are looked at
    // under its flock), and one for the try.
    int holder_reads = 0;
    for (absl::string_view line : absl::StrSplit(calls, '\n')) {
      if (absl::StrContains(line, "FUTEX_WAIT_BITSET")) break;
      // "PID  openat(AT_FDCWD, "/proc/OTHER/task/OTHER/stat", ...)"
      const absl::string_view pid = line.substr(0, line.find(' '));
      if (absl::StrContains(line, "/task/") && absl::StrContains(line, "/stat\"") &&
          !absl::StrContains(line, absl::StrCat("\"/proc/", pid, "/"))) {
        ++holder_reads;
      }
    }
    if (holder_reads < 1 || holder_reads > 2) {
      fail_msg("posix-semaphore: %d reads of the holder's /proc entry before the first "
               "sleep, expected 1 or 2 (attaching, then one try):\n%s",
               holder_reads, calls.c_str());
    }
  }
}

}  // namespace ipclock_test
