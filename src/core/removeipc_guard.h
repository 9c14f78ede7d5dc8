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
#include "ipclock/store_factory.h"
#include "platform/removeipc.h"

namespace ipclock {

// kWarn prints one line to stderr the first time a risk of each kind shows
// up in this process; kRefuse returns FailedPrecondition with the reason and
// the advice when the locks would be deleted at logout (a tmp-cleaner risk
// only warns: it is a matter of age, not of certainty); kIgnore does
// nothing. `store` names the store in the message.
absl::Status ApplyRemoveIpcPolicy(RemoveIpcPolicy policy,
                                  const RemoveIpcReport& report,
                                  absl::string_view store);

// Takes the `removeipc=warn|refuse|ignore` option from `dsn` (so that the
// store's own parser does not see it as unknown) and, for the schemes that
// keep locks in SysV IPC, /dev/shm or a lock dir, applies the policy it or
// `options` names. Called before the store is built, so that a refused store
// leaves nothing behind. InvalidArgument for a bad option value.
absl::Status GuardRemoveIpc(Dsn& dsn, const StoreOptions& options);

// $IPCLOCK_REMOVEIPC_ROOT, else "/".
std::string RemoveIpcRoot();

// Forgets which warnings were printed, so that a test can see them again.
void ResetRemoveIpcWarningsForTesting();

}  // namespace ipclock

#endif  // IPCLOCK_CORE_REMOVEIPC_GUARD_H_
