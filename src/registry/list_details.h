// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What `ListHeldLocks()` adds to every store's rows: who the holders and
// waiters are in systemd's terms (their command line, cgroup and unit, from
// /proc), and a waiter count from the waiters a store names.

#ifndef IPCLOCK_REGISTRY_LIST_DETAILS_H_
#define IPCLOCK_REGISTRY_LIST_DETAILS_H_

#include "ipclock/admin/inspect.h"

namespace ipclock {

// For each holder and waiter whose `command` the store filled (it judged
// the pid a live process of this host), fills the command line, cgroup and
// unit; sets `waiters` from `waiter_list` where the store named waiters but
// left the count unset, and `lock` to `object` where the store left it
// empty (its object names the lock whoever holds it).
void AddProcessDetails(HeldLocks* held);

}  // namespace ipclock

#endif  // IPCLOCK_REGISTRY_LIST_DETAILS_H_
