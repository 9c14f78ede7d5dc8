// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// -----------------------------------------------------------------------------
// File: lease_overrun.h
// -----------------------------------------------------------------------------
//
// On a store whose locks expire (a lease, `LockOptions::ttl`), a holder that
// works longer than its lease without `Lock::Refresh()` goes on after the
// store has let someone else take the lock. Nothing can undo that, but it
// must not go unnoticed: `Lock::Release()` of a lock whose lease ran out
// still releases it and returns Aborted ("the lease ran out 1.234s before
// release"), and the lease-overrun handler is told once per lock,
// also when the release happens in the Lock's destructor, where the status
// is dropped.
//
// The handler is the program's to set. The default hands one warning line to
// the message sink (messages.h, stderr unless the program set another); set
// an empty handler to say nothing of overruns.
//
// `ipclock::LockWatch` (lock_watch.h) renews leases from a background
// thread so that a lock held by a live owner does not run out.

#ifndef IPCLOCK_LEASE_OVERRUN_H_
#define IPCLOCK_LEASE_OVERRUN_H_

#include <functional>
#include <string>

#include "absl/time/time.h"

namespace ipclock {

struct LeaseOverrun {
  std::string store;     // Store::Describe() of the lock's store
  std::string resource;  // the resource name, as given (any bytes)
  absl::Duration ttl;    // LockOptions::ttl (a Refresh() may have set another)
  absl::Duration overrun;  // how long before the release the lease ran out
};

using LeaseOverrunHandler = std::function<void(const LeaseOverrun&)>;

// Sets the process-wide handler and returns the previous one. The handler
// runs on the thread that releases the lock, with no ipclock lock held; it
// may be called from several threads at once. An empty handler reports
// nothing.
LeaseOverrunHandler SetLeaseOverrunHandler(LeaseOverrunHandler handler);

// The default handler: a warning to the message sink naming the store, the
// resource, the lease and the overrun.
void WriteLeaseOverrunMessage(const LeaseOverrun& overrun);

}  // namespace ipclock

#endif  // IPCLOCK_LEASE_OVERRUN_H_
