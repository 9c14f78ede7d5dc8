// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "store_dsn.h"

#include "absl/strings/str_cat.h"
#include "ipclock/store_factory.h"

namespace ipclock_cli {

absl::StatusOr<ipclock::Dsn> ParseStoreDsn(const std::string& text) {
  return ipclock::Dsn::Parse(text.empty() ? ipclock::kDefaultDsn : absl::string_view(text));
}

absl::StatusOr<std::string> FlockDirOf(const ipclock::Dsn& dsn) {
  if (dsn.has_authority() && !dsn.host().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad DSN \"", dsn.redacted(),
        "\": flock takes a dir as flock:///absolute/dir (three slashes)"));
  }
  std::string dir = dsn.path();
  if (!dir.empty() && dir[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad DSN \"", dsn.redacted(), "\": the lock dir must be an absolute path"));
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

bool FlockPathNaming(const ipclock::Dsn& dsn) {
  return dsn.PeekOption("naming") == std::optional<std::string>("path");
}

}  // namespace ipclock_cli
