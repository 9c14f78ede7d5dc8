// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The checks of this host's kernel: SysV semaphore limits, io_uring, and
// the signal that timed flock waits use. Only the SysV limits can break
// locks (a full table makes the semaphore store fail); the rest is
// information.

#include <signal.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>

#include <algorithm>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "doctor_checks.h"
#include "ipclock_config.h"
#include "platform/small_file.h"
#include "platform/timed_flock.h"

#if IPCLOCK_HAVE_IO_URING
#include <liburing.h>
#endif

namespace ipclock_cli {

namespace {

using Level = Finding::Level;

// Semaphores per set the semaphore store needs (ipclock's layout), and
// operations it passes to one semop(2).
constexpr long kNeededSemmsl = 5;
constexpr long kNeededSemopm = 2;

union SemArg {
  int val;
  struct seminfo* info;
};

std::string HostNote(const DoctorTarget& target) {
  return target.host() ? "" : " (this host's kernel, not the tree's)";
}

}  // namespace

void CheckSysvLimits(const DoctorTarget& target, std::vector<Finding>* out) {
  Finding f;
  f.check = "sysv-limits";
  f.subject = "/proc/sys/kernel/sem";
  std::optional<std::string> text = ipclock::ReadSmallFile("/proc/sys/kernel/sem");
  std::vector<long> v;
  if (text) {
    for (absl::string_view word :
         absl::StrSplit(*text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
      long n;
      if (absl::SimpleAtoi(word, &n)) v.push_back(n);
    }
  }
  if (v.size() != 4) {
    f.level = Level::kInfo;
    f.message = "cannot read /proc/sys/kernel/sem (no SysV IPC in this kernel?)";
    out->push_back(std::move(f));
    return;
  }
  const long semmsl = v[0], semmns = v[1], semopm = v[2], semmni = v[3];
  struct seminfo info;
  SemArg arg;
  arg.info = &info;
  const bool have_usage = semctl(0, 0, SEM_INFO, arg) >= 0;
  const long sets = have_usage ? info.semusz : -1;
  const long sems = have_usage ? info.semaem : -1;

  std::vector<std::string> problems;
  if (semmsl < kNeededSemmsl) {
    problems.push_back(absl::StrCat("SEMMSL ", semmsl, " < ", kNeededSemmsl,
                                    " semaphores per set"));
  }
  if (semopm < kNeededSemopm) {
    problems.push_back(absl::StrCat("SEMOPM ", semopm, " < ", kNeededSemopm,
                                    " operations per semop"));
  }
  // Each held or waited-for resource takes one set; a table nine-tenths
  // full leaves little room for a burst.
  if (have_usage && (sets * 10 >= semmni * 9 || sems + kNeededSemmsl > semmns)) {
    problems.push_back(absl::StrCat(sets, " of SEMMNI ", semmni, " sets and ", sems,
                                    " of SEMMNS ", semmns, " semaphores in use"));
  }
  f.message = absl::StrCat("SEMMSL ", semmsl, ", SEMMNS ", semmns, ", SEMOPM ", semopm,
                           ", SEMMNI ", semmni,
                           have_usage ? absl::StrCat("; ", sets, " sets in use") : "",
                           HostNote(target));
  if (!problems.empty()) {
    // Only the semaphore store, on this very host, is broken by it.
    f.level = target.scheme == "semaphore" && target.host() ? Level::kRisk : Level::kInfo;
    absl::StrAppend(&f.message, ": ", absl::StrJoin(problems, "; "),
                    ", so new semaphore-store locks can fail with ENOSPC or EINVAL");
    f.advice = absl::StrCat(
        "raise the limits, e.g. kernel.sem = ", std::max(semmsl, 250L), " ",
        std::max(semmns, 256000L), " ", std::max(semopm, 32L), " ",
        std::max(semmni, 32000L),
        " in /etc/sysctl.d/90-ipclock.conf (then sysctl --system), or find "
        "what leaks sets (ipcs -s)");
  }
  out->push_back(std::move(f));
}

void CheckIoUring(const DoctorTarget& target, std::vector<Finding>* out) {
  Finding f;
  f.level = Level::kInfo;
  f.check = "io_uring";
  f.subject = "/proc/sys/kernel/io_uring_disabled";
  std::optional<std::string> text = ipclock::ReadSmallFile(f.subject);
  int disabled = 0;
  std::string setting =
      text && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &disabled)
          ? absl::StrCat("io_uring_disabled=", disabled,
                         disabled == 0   ? " (enabled)"
                         : disabled == 1 ? " (only for the io_uring_group)"
                                         : " (disabled)")
          : "no io_uring_disabled setting (kernels before 6.6 have none)";
#if IPCLOCK_HAVE_IO_URING
  // The setting says what is allowed; seccomp filters (containers) and
  // group rules can still refuse us, which only a real ring shows.
  struct io_uring ring;
  const int err = io_uring_queue_init(2, &ring, 0);
  if (err == 0) io_uring_queue_exit(&ring);
  const std::string probe =
      err == 0 ? "io_uring_setup works for this process"
               : absl::StrCat("io_uring_setup fails here: ", strerror(-err));
#else
  const std::string probe = "this build has no liburing, so nothing was probed";
#endif
  f.message = absl::StrCat(setting, "; ", probe, HostNote(target),
                           ". Locks do not depend on it");
  out->push_back(std::move(f));
}

void CheckTimedWaitSignal(const DoctorTarget& target, std::vector<Finding>* out) {
  Finding f;
  f.level = Level::kInfo;
  f.check = "timed-wait-signal";
  const int sig = ipclock::TimedWaitSignal();
  if (sig == 0) {
    f.message = absl::StrCat(
        "every real-time signal has a handler in this process, so timed flock "
        "waits poll (1 to 20 ms)", HostNote(target));
  } else {
    f.subject = absl::StrCat("SIGRTMIN+", sig - SIGRTMIN);
    f.message = absl::StrCat(
        "timed flock waits use signal ", sig, " (SIGRTMIN+", sig - SIGRTMIN,
        ", the highest real-time signal left at its default); a program that "
        "handles that signal itself makes them use the next one down");
  }
  out->push_back(std::move(f));
}

}  // namespace ipclock_cli
