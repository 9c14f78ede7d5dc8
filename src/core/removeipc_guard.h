// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The RemoveIPC policy (StoreOptions::remove_ipc, or `removeipc=` in a DSN)
// applied to the stores whose locks systemd-logind or a tmp cleaner may
// delete: see platform/removeipc.h for what is checked.
//
// The checks read the logind, login.defs and linger files below
// $IPCLOCK_REMOVEIPC_ROOT when it is set (tests, and checks of an image that
// is not the running system), else below "/". It is an environment variable
// rather than a DSN option because it describes the host, not where locks
// live; a setuid program ignores it.

#ifndef IPCLOCK_CORE_REMOVEIPC_GUARD_H_
#define IPCLOCK_CORE_REMOVEIPC_GUARD_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/dsn.h"
#include "core/store_entry.h"
#include "ipclock/remove_ipc.h"
#include "platform/removeipc.h"

namespace ipclock {

// Applies `policy` to `report`: kWarn hands one message to the sink
// (diagnostics.h) the first time a risk of each kind shows up in this process;
// kRefuse returns FailedPrecondition with the reason and the advice when the
// locks would be deleted at logout (a tmp-cleaner risk only warns: it is a
// matter of age, not of certainty); kIgnore does nothing. `store` names the
// store in the message.
absl::Status ApplyRemoveIpcPolicy(RemoveIpcPolicy policy,
                                  const RemoveIpcReport& report,
                                  absl::string_view store);

// Checks what the store of `entry` risks for this process's effective uid,
// keeping its locks where its entry's `ipc` says (and in `lock_dir`, for
// kLockDir), and applies `policy`; OK for a store RemoveIPC leaves alone.
// Each local store's factory calls it with its own entry before it creates
// anything, so that a refused store leaves nothing behind.
absl::Status GuardRemoveIpc(const StoreEntry& entry, absl::string_view lock_dir,
                            RemoveIpcPolicy policy, absl::string_view store);

// Takes the `removeipc=warn|refuse|ignore` option from `dsn`: its value, or
// `fallback` when the DSN has none. InvalidArgument for another value.
absl::StatusOr<RemoveIpcPolicy> TakeRemoveIpcPolicy(Dsn& dsn,
                                                    RemoveIpcPolicy fallback);
// The same into a store's options: `*policy` is set on success.
absl::Status TakeRemoveIpcPolicy(Dsn& dsn, RemoveIpcPolicy fallback, RemoveIpcPolicy* policy);

// $IPCLOCK_REMOVEIPC_ROOT, else "/".
std::string RemoveIpcRoot();

// Forgets which warnings were printed, so that a test can see them again.
void ResetRemoveIpcWarningsForTesting();

}  // namespace ipclock

#endif  // IPCLOCK_CORE_REMOVEIPC_GUARD_H_
