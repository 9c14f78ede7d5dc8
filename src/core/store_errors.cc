// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/store_errors.h"

#include "platform/errors.h"

namespace ipclock {

// Each constructor and the code it gives.
#define IPCLOCK_STORE_ERRORS(X)                \
  X(ConfigurationError, kInvalidArgument)      \
  X(RangeError, kOutOfRange)                   \
  X(RefusedError, kPermissionDenied)           \
  X(NotBuiltError, kUnimplemented)             \
  X(TransientError, kUnavailable)              \
  X(LostError, kAborted)                       \
  X(MisuseError, kFailedPrecondition)          \
  X(MissingError, kNotFound)                   \
  X(ExistsError, kAlreadyExists)               \
  X(OutOfResourcesError, kResourceExhausted)   \
  X(CorruptionError, kDataLoss)                \
  X(UnexpectedError, kInternal)                \
  X(StayedBusyError, kDeadlineExceeded)

#define IPCLOCK_DEFINE_STORE_ERROR(Name, code)                                \
  absl::Status Name(absl::string_view message) {                              \
    return absl::Status(absl::StatusCode::code, message);                     \
  }                                                                           \
  absl::Status Name(absl::string_view store, absl::string_view resource,      \
                    absl::string_view message) {                              \
    return StoreError(absl::StatusCode::code, store, resource, message);      \
  }
IPCLOCK_STORE_ERRORS(IPCLOCK_DEFINE_STORE_ERROR)
#undef IPCLOCK_DEFINE_STORE_ERROR

StoreErrorMaker FaultOfErrno(int err) {
  switch (ErrnoToCode(err)) {
#define IPCLOCK_CASE_OF_STORE_ERROR(Name, code) \
  case absl::StatusCode::code:                  \
    return Name;
    IPCLOCK_STORE_ERRORS(IPCLOCK_CASE_OF_STORE_ERROR)
#undef IPCLOCK_CASE_OF_STORE_ERROR
    default:
      return UnexpectedError;
  }
}

FaultClass ClassOf(StoreErrorMaker fault) { return FaultClassOf(fault("", "", "")); }

absl::Status ErrorOf(StoreErrorMaker fault, absl::string_view message) {
  return Restated(fault("", "", ""), message);
}

absl::Status Restated(const absl::Status& fault, absl::string_view message) {
  return absl::Status(fault.code(), message);
}

absl::Status Restated(const absl::Status& fault, absl::string_view store,
                      absl::string_view resource, absl::string_view message) {
  return StoreError(fault.code(), store, resource, message);
}

}  // namespace ipclock
