// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "exit_codes.h"

#include <stdio.h>

#include "absl/strings/strip.h"

namespace ipclock_cli {

int ExitCodeForStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kPermissionDenied:
      return kExitNoPermission;
    case absl::StatusCode::kUnavailable:
    // A store left out of this build is as unavailable as a server that is
    // down: the command line itself was fine.
    case absl::StatusCode::kUnimplemented:
      return kExitUnavailable;
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    default:
      return kExitOsError;
  }
}

void PrintError(absl::string_view who, const absl::Status& status) {
  absl::string_view message = status.message();
  absl::ConsumePrefix(&message, "ipclock: ");
  fprintf(stderr, "%.*s: %.*s\n", static_cast<int>(who.size()), who.data(),
          static_cast<int>(message.size()), message.data());
}

}  // namespace ipclock_cli
