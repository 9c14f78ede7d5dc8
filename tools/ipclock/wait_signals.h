// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// SIGINT, SIGTERM and SIGHUP that reach `ipclock run` before COMMAND starts.
//
// Their default action kills ipclock at once, which is right while it holds
// nothing and a killed waiter leaves nothing behind (flock, the semaphores,
// shm, the database servers' queues: the kernel or the server forgets a dead
// waiter). A waiter killed in a store's own queue leaves its entry there: an
// etcd key until its lease ends, a ZooKeeper node until its session expires,
// a fair store's ticket until those behind find its process gone. So while
// ipclock waits on a store whose waits watch a canceller (the `cancellable`
// capability), and from the moment its locks are held until COMMAND's
// runner blocks the signals, the handler only records the signal and
// cancels the wait: the wait leaves its queue, ipclock lets go of what it
// holds, closes the store (which revokes an etcd lease and ends a ZooKeeper
// session), and then dies by the same signal, so that the parent's wait()
// sees the signal as it would have, and a shell reports 128+N.
//
// The handler calls only async-signal-safe functions (sigaction, raise,
// Canceller::Cancel). It is installed without SA_RESTART: a wait that sleeps
// in the kernel on this thread (a fair store's futex or flock) returns EINTR
// and looks at the canceller at once.

#ifndef IPCLOCK_TOOLS_IPCLOCK_WAIT_SIGNALS_H_
#define IPCLOCK_TOOLS_IPCLOCK_WAIT_SIGNALS_H_

#include "absl/time/time.h"
#include "ipclock/lock.h"

namespace ipclock_cli {

// Installs the handler on SIGINT, SIGTERM and SIGHUP, except those ipclock
// was told to ignore; until DeferWaitSignals(), it kills as the default
// action does.
void InstallWaitSignals();

// From now on the handler records the signal and cancels `canceller` (if
// not null) instead of killing. `canceller` must outlive the handler's
// use (until RestoreWaitSignals(), or the process's end).
void DeferWaitSignals(ipclock::Canceller* canceller);

// Puts back the dispositions InstallWaitSignals() found. Call it with the
// signals blocked (after ChildRunner::Create()), so that none is lost: a
// signal that comes later stays pending for COMMAND's runner.
void RestoreWaitSignals();

// The signal the handler recorded, or 0.
int WaitSignalReceived();

// Sleeps for `d`, or until a deferred signal comes.
void SleepUnlessSignalled(absl::Duration d);

// Dies by `sig` with its default action (unblocking it first). Returns
// only if that did not end the process.
void DieBySignal(int sig);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_WAIT_SIGNALS_H_
