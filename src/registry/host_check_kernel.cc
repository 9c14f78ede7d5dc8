// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The checks of this host's kernel: SysV semaphore limits, io_uring, and
// the signal that timed flock waits use. Only the SysV limits can break
// locks (a full table makes the semaphore store fail); the rest is
// information.

#include <signal.h>

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "registry/host_check_internal.h"
#include "platform/host_probe.h"
#include "platform/ipc_probe.h"
#include "platform/small_file.h"
#include "platform/timed_flock.h"

namespace ipclock {
namespace host_check {

namespace {
// Semaphores per set the semaphore store needs (ipclock's layout), and
// operations it passes to one semop(2).
constexpr long kNeededSemmsl = 5;
constexpr long kNeededSemopm = 2;
}  // namespace

void CheckSysvLimits(const Target& target, std::vector<HostFinding>* out) {
  HostFinding f = Finding(Level::kOk, "sysv-limits", "/proc/sys/kernel/sem");
  std::optional<std::string> text = ReadSmallFile("/proc/sys/kernel/sem");
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
  const std::optional<SysvSemUsage> usage = ReadSysvSemUsage();

  std::vector<std::string> problems;
  if (semmsl < kNeededSemmsl) {
    problems.push_back(
        absl::StrCat("SEMMSL ", semmsl, " < ", kNeededSemmsl, " semaphores per set"));
  }
  if (semopm < kNeededSemopm) {
    problems.push_back(
        absl::StrCat("SEMOPM ", semopm, " < ", kNeededSemopm, " operations per semop"));
  }
  // Each held or waited-for resource takes one set; a table nine-tenths
  // full leaves little room for a burst.
  if (usage && (usage->sets * 10 >= semmni * 9 || usage->semaphores + kNeededSemmsl > semmns)) {
    problems.push_back(absl::StrCat(usage->sets, " of SEMMNI ", semmni, " sets and ",
                                    usage->semaphores, " of SEMMNS ", semmns,
                                    " semaphores in use"));
  }
  f.message = absl::StrCat("SEMMSL ", semmsl, ", SEMMNS ", semmns, ", SEMOPM ", semopm,
                           ", SEMMNI ", semmni,
                           usage ? absl::StrCat("; ", usage->sets, " sets in use") : "",
                           target.KernelNote());
  if (!problems.empty()) {
    // Only the semaphore store, on this very host, is broken by it.
    f.level = target.store == "semaphore" && target.host ? Level::kRisk : Level::kInfo;
    absl::StrAppend(&f.message, ": ", absl::StrJoin(problems, "; "),
                    ", so new semaphore-store locks can fail with ENOSPC or EINVAL");
    f.advice = absl::StrCat("raise the limits, e.g. kernel.sem = ", std::max(semmsl, 250L), " ",
                            std::max(semmns, 256000L), " ", std::max(semopm, 32L), " ",
                            std::max(semmni, 32000L),
                            " in /etc/sysctl.d/90-ipclock.conf (then sysctl --system), or "
                            "find what leaks sets (ipcs -s)");
  }
  out->push_back(std::move(f));
}

void CheckIoUring(const Target& target, std::vector<HostFinding>* out) {
  HostFinding f = Finding(Level::kInfo, "io_uring", "/proc/sys/kernel/io_uring_disabled");
  std::optional<std::string> text = ReadSmallFile(f.subject);
  int disabled = 0;
  const std::string setting =
      text && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &disabled)
          ? absl::StrCat("io_uring_disabled=", disabled,
                         disabled == 0   ? " (enabled)"
                         : disabled == 1 ? " (only for the io_uring_group)"
                                         : " (disabled)")
          : "no io_uring_disabled setting (kernels before 6.6 have none)";
  const absl::Status probe = ProbeIoUring();
  const std::string probed =
      probe.ok() ? "io_uring_setup works for this process"
      : absl::IsUnimplemented(probe)
          ? "this build has no liburing, so nothing was probed"
          : absl::StrCat("io_uring_setup fails here: ", probe.message());
  f.message = absl::StrCat(setting, "; ", probed, target.KernelNote(),
                           ". Locks do not depend on it");
  out->push_back(std::move(f));
}

void CheckTimedWaitSignal(const Target& target, std::vector<HostFinding>* out) {
  HostFinding f = Finding(Level::kInfo, "timed-wait-signal");
  const int sig = TimedWaitSignal();
  if (sig == 0) {
    f.message = absl::StrCat(
        "every real-time signal has a handler in this process, so timed flock "
        "waits poll (1 to 20 ms)",
        target.KernelNote());
  } else {
    f.subject = absl::StrCat("SIGRTMIN+", sig - SIGRTMIN);
    f.message = absl::StrCat(
        "timed flock waits use signal ", sig, " (SIGRTMIN+", sig - SIGRTMIN,
        ", the highest real-time signal left at its default); a program that "
        "handles that signal itself makes them use the next one down");
  }
  out->push_back(std::move(f));
}

}  // namespace host_check
}  // namespace ipclock
