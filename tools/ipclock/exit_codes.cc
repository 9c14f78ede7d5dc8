// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "exit_codes.h"

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

}  // namespace ipclock_cli
