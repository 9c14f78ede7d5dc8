// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The pieces of MysqlLockName() (include/ipclock/stores/mysql_store.h), exposed for
// tests. No connector: these are in every build.

#ifndef IPCLOCK_STORES_MYSQL_LOCK_NAME_H_
#define IPCLOCK_STORES_MYSQL_LOCK_NAME_H_

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"

namespace ipclock {

// The number of characters of `text` if it is valid UTF-8 as utf8mb4 takes
// it (no overlong forms, no surrogates, nothing above U+10FFFF), else
// nullopt.
std::optional<size_t> Utf8Length(absl::string_view text);

// The byte length of the first `chars` characters of valid UTF-8 `text`.
size_t Utf8PrefixBytes(absl::string_view text, size_t chars);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_MYSQL_LOCK_NAME_H_
