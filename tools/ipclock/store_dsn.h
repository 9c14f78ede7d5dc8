// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Reading a store's DSN without building the store: `list` and `doctor`
// must not create the lock dir or segment that building one would.

#ifndef IPCLOCK_TOOLS_IPCLOCK_STORE_DSN_H_
#define IPCLOCK_TOOLS_IPCLOCK_STORE_DSN_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/dsn.h"

namespace ipclock_cli {

// --store's DSN, or the default store's when `text` is empty.
absl::StatusOr<ipclock::Dsn> ParseStoreDsn(const std::string& text);

// The lock dir a `flock` DSN names: empty for the default dir, else an
// absolute path without trailing slashes. InvalidArgument, as the store
// itself would say, for a host part or a relative dir.
absl::StatusOr<std::string> FlockDirOf(const ipclock::Dsn& dsn);

// Whether a `flock` DSN locks exact paths (naming=path) rather than names.
bool FlockPathNaming(const ipclock::Dsn& dsn);

}  // namespace ipclock_cli

#endif  // IPCLOCK_TOOLS_IPCLOCK_STORE_DSN_H_
