// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// PDO's form of a DSN, "driver:key=value;key=value" ("mysql:host=db;
// port=3306", "pgsql:host=db;dbname=app"), which PHP apps already hold and
// which the MySQL and PostgreSQL connections both accept: its body split
// once, here, so that both refuse the same mistakes in the same words.

#ifndef IPCLOCK_STORES_CONNECTIONS_PDO_BODY_H_
#define IPCLOCK_STORES_CONNECTIONS_PDO_BODY_H_

#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dsn.h"

namespace ipclock {

// One "key=value" of the body; the key in lower case, as PDO reads it.
struct PdoPair {
  std::string key;
  std::string value;
};

// The pairs of `dsn`'s body (its path, split at ';', empty parts skipped),
// in order. InvalidArgument for a part without '=', and for a key of
// `password_keys`: a password belongs in the query option ?password=...,
// which every message redacts, and a password in the body would be shown.
absl::StatusOr<std::vector<PdoPair>> PdoPairsOf(
    const Dsn& dsn, std::initializer_list<absl::string_view> password_keys);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_CONNECTIONS_PDO_BODY_H_
