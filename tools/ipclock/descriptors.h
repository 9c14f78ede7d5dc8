// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What `ipclock run` does with descriptors: standard streams that are
// closed are filled before anything is opened, and COMMAND inherits only
// what ipclock itself inherited (and, on flock, the lock's descriptor).
//
// Standard streams. Started with stdin, stdout or stderr closed (`2>&-`),
// the next descriptor opened would take the stream's place: a lock file or
// segment opened as fd 2 gets ipclock's own messages written over it, a
// server's socket gets them in the middle of its protocol. /dev/null is
// opened in each closed place first (the library does the same at its
// entry points, for programs that did not), and COMMAND inherits it there.
//
// Inheritance. The descriptors ipclock opens itself are close-on-exec,
// but those that client libraries open (hiredis, libpq, MariaDB's,
// libmemcached, ZooKeeper's socket and its pipe pair) are not all so, and a
// database session whose socket COMMAND inherited outlives a killed
// ipclock for as long as COMMAND runs, with its advisory locks. So the
// child, between fork and exec, marks close-on-exec every descriptor from 3
// up except those ipclock was started with: whatever a library opened, at
// whatever time, in whatever thread, stays out of COMMAND.

#ifndef IPCLOCK_TOOLS_IPCLOCK_DESCRIPTORS_H_
#define IPCLOCK_TOOLS_IPCLOCK_DESCRIPTORS_H_

#include <vector>

namespace ipclock_cli {

// Opens /dev/null on each of descriptors 0, 1 and 2 that is closed. Call it
// first thing in main().
void FillClosedStdio();

// The descriptors from 3 up that are open now, in increasing order: called
// at the start, those ipclock inherited.
std::vector<int> OpenDescriptors();

// In the child between fork and exec: every descriptor from 3 up becomes
// close-on-exec except those of `keep` (increasing order), whose
// close-on-exec flag is cleared. System calls only (async-signal-safe): the
// child of a threaded process may not allocate.
void KeepOnlyAcrossExec(const int* keep, int n_keep);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_DESCRIPTORS_H_
