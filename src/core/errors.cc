// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "ipclock/errors.h"

namespace ipclock {

FaultClass FaultClassOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return FaultClass::kConfiguration;
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return FaultClass::kRefused;
    case absl::StatusCode::kUnimplemented:
      return FaultClass::kNotBuilt;
    case absl::StatusCode::kUnavailable:
      return FaultClass::kTransient;
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kCancelled:
      return FaultClass::kLost;
    case absl::StatusCode::kFailedPrecondition:
      return FaultClass::kMisuse;
    default:
      return FaultClass::kOther;
  }
}

absl::StatusCode CodeOf(FaultClass fault) {
  switch (fault) {
    case FaultClass::kConfiguration:
      return absl::StatusCode::kInvalidArgument;
    case FaultClass::kRefused:
      return absl::StatusCode::kPermissionDenied;
    case FaultClass::kNotBuilt:
      return absl::StatusCode::kUnimplemented;
    case FaultClass::kTransient:
      return absl::StatusCode::kUnavailable;
    case FaultClass::kLost:
      return absl::StatusCode::kAborted;
    case FaultClass::kMisuse:
      return absl::StatusCode::kFailedPrecondition;
    case FaultClass::kOther:
      break;
  }
  return absl::StatusCode::kInternal;
}

}  // namespace ipclock
