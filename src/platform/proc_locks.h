// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Who holds and who waits for flock(2) locks, and who holds POSIX record
// locks, on this host, from /proc/locks.
//
// A line of /proc/locks reads
//   3: FLOCK  ADVISORY  WRITE 4242 08:02:1311022 0 EOF
//   3: -> FLOCK  ADVISORY  WRITE 4250 08:02:1311022 0 EOF
//   4: POSIX  ADVISORY  READ 4260 00:1a:2117 8589934592 8589934592
// with the device as hex major:minor and the inode in decimal, then the
// first and last byte locked; a "->" line is a process blocked waiting for
// the lock of the line above it.
//
// Caveats:
//   * The pid is the process that took the lock. A flock lock belongs to the
//     open file, so after that process forked and exited, a child that kept
//     the descriptor holds it under a pid that is gone.
//   * Pids of processes in other pid namespaces show as they do in ours, or
//     as 0 when they have no pid here.
//   * On btrfs, stat(2) reports a per-subvolume device while /proc/locks
//     shows the filesystem's, so there files must be matched by inode alone.

#ifndef IPCLOCK_PLATFORM_PROC_LOCKS_H_
#define IPCLOCK_PLATFORM_PROC_LOCKS_H_

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ipclock {

struct ProcFlockLock {
  bool waiting = false;  // a "->" line: blocked, not holding
  bool write = false;    // exclusive (WRITE) rather than shared (READ)
  pid_t pid = 0;
  unsigned major = 0;
  unsigned minor = 0;
  uint64_t inode = 0;
};

// The FLOCK lines of `text` (the content of /proc/locks); POSIX and OFD
// record locks, and lines that do not parse, are left out.
std::vector<ProcFlockLock> ParseProcFlockLocks(absl::string_view text);

// The FLOCK lines of this host's /proc/locks. Unavailable, naming `who`,
// when it cannot be read (no /proc).
absl::StatusOr<std::vector<ProcFlockLock>> ReadProcFlockLocks(absl::string_view who);

// A POSIX record lock held (`waiting` is false), on bytes [start, last].
struct ProcRecordLock : ProcFlockLock {
  uint64_t start = 0;
  uint64_t last = 0;  // UINT64_MAX for "EOF"
};

// The held POSIX lines of `text`, and of this host's /proc/locks (as
// ReadProcFlockLocks() reads it). OFD locks show no pid and are left out.
std::vector<ProcRecordLock> ParseProcRecordLocks(absl::string_view text);
absl::StatusOr<std::vector<ProcRecordLock>> ReadProcRecordLocks(absl::string_view who);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_PROC_LOCKS_H_
