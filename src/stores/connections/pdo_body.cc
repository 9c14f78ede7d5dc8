// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/connections/pdo_body.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/store_errors.h"

namespace ipclock {

absl::StatusOr<std::vector<PdoPair>> PdoPairsOf(
    const Dsn& dsn, std::initializer_list<absl::string_view> password_keys) {
  std::vector<PdoPair> pairs;
  for (absl::string_view part : absl::StrSplit(dsn.path(), ';', absl::SkipEmpty())) {
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos) {
      return BadDsn(dsn, absl::StrCat("expected key=value in the PDO DSN, not '", part, "'"));
    }
    PdoPair pair{absl::AsciiStrToLower(part.substr(0, eq)), std::string(part.substr(eq + 1))};
    for (absl::string_view password_key : password_keys) {
      if (pair.key != password_key) continue;
      // Not BadDsn(): the redacted DSN would still show the password.
      return ConfigurationError(absl::StrCat(
          "ipclock: bad DSN for the ", dsn.scheme(), " store: a password must be given as "
          "the query option ?password=..., not inside the PDO part (messages redact only "
          "the former)"));
    }
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

}  // namespace ipclock
