// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Is a process that once held a lock still there? Read from /proc/<pid>/stat.
//
// A pid alone cannot say: pids are reused, and a killed process stays a
// zombie (kill(pid, 0) succeeds) until its parent reaps it. The start time
// (field 22 of /proc/<pid>/stat, clock ticks since boot) tells a reused pid
// from the original, and the state field tells a zombie from a live process.

#ifndef IPCLOCK_PLATFORM_PROC_PID_H_
#define IPCLOCK_PLATFORM_PROC_PID_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ipclock {

// The start time of `pid` in clock ticks since boot, or 0 if it cannot be
// read (no such process, or /proc hides it).
uint64_t ProcessStartTime(pid_t pid);

// True only when `pid` is certainly gone: no such process, a zombie, a
// process whose every thread is exiting (the kernel gives a killed
// process's SEM_UNDO adjustments, flocks and robust mutexes back while it
// exits, before it is a zombie: whoever they wake must see it as gone), or
// a different process under the same pid (its start time differs from
// `start_time`; pass 0 to skip that check). A process that /proc hides from
// us (hidepid=, another user) but that kill(pid, 0) still finds counts as
// alive: a live holder must never be taken for dead.
bool ProcessIsGone(pid_t pid, uint64_t start_time);

// True when kill(pid, 0) finds no such process (ESRCH): gone for certain,
// and told by one system call, without /proc. A zombie, a process being
// killed and a reused pid are still found: "false" proves nothing, and
// ProcessIsGone() is the exact answer.
bool NoSuchProcess(pid_t pid);

// The processes whose parent is `parent` now, read from every
// /proc/PID/stat (kernels built without CONFIG_PROC_CHILDREN have no
// /proc/PID/task/TID/children). Complete only while `parent` cannot fork:
// stopped, or known to fork no more.
std::vector<pid_t> ChildProcesses(pid_t parent);

// The inode of this process's pid namespace: pids only mean something to
// processes that share it.
uint64_t PidNamespaceId();

// /proc/<pid>/comm without its newline: the name the process gave itself
// (any bytes, up to 15 of them). Empty when it cannot be read.
std::string ProcessCommandName(pid_t pid);

// /proc/<pid>/cmdline with the NULs between arguments read as spaces: the
// arguments as the process left them (a process may rewrite its own), cut
// to `max_bytes`. Empty when it cannot be read or the process has none (a
// kernel thread, a zombie).
std::string ProcessCommandLine(pid_t pid, size_t max_bytes = 4096);

// Where a process stands in the cgroup tree, and so in systemd's units.
struct ProcessCgroup {
  // Its cgroup path: the unified (v2) hierarchy's ("0::" line) or, where
  // that says nothing of a unit, systemd's own v1 hierarchy's
  // ("name=systemd", on hybrid and legacy hosts). Empty when unknown.
  std::string path;
  // The systemd unit: the path's last component that ends in ".service" or
  // ".scope" (a service's sub-cgroups, e.g. a delegated one, belong to it).
  // Empty when none does.
  std::string unit;
};

// From the text of /proc/<pid>/cgroup.
ProcessCgroup ParseProcessCgroup(absl::string_view text);

// The cgroup of `pid`; empty fields when it cannot be read.
ProcessCgroup ReadProcessCgroup(pid_t pid);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_PROC_PID_H_
