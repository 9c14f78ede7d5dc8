// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "capi/errors.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "ipclock/c.h"
#include "ipclock/errors.h"

namespace ipclock {
namespace capi {

int CodeFor(absl::StatusCode code) {
  if (code == absl::StatusCode::kOk) return 0;
  // The classes of ipclock/errors.h first, so that a fault has the number
  // its class has everywhere; the "other" class says a little more by its
  // code where it can.
  switch (FaultClassOf(absl::Status(code, ""))) {
    case FaultClass::kConfiguration:
      return -EINVAL;
    case FaultClass::kRefused:
      return -EACCES;
    case FaultClass::kNotBuilt:
      return -ENOSYS;
    case FaultClass::kTransient:
      return -EAGAIN;
    // What every store says of a lock lost while held.
    case FaultClass::kLost:
      return IPCLOCK_LOST;
    case FaultClass::kMisuse:
      return -EPERM;
    case FaultClass::kOther:
      break;
  }
  switch (code) {
    case absl::StatusCode::kNotFound:
      return -ENOENT;
    case absl::StatusCode::kAlreadyExists:
      return -EEXIST;
    case absl::StatusCode::kResourceExhausted:
      return -ENOSPC;
    case absl::StatusCode::kDeadlineExceeded:
      return -ETIMEDOUT;
    default:
      return -EIO;
  }
}

int Fail(ipclock_lock* lock, int code, absl::string_view message) {
  lock->error.assign(message.data(), message.size());
  return code;
}

int Fail(ipclock_lock* lock, const absl::Status& status) {
  return Fail(lock, CodeFor(status.code()), status.message());
}

char* MallocCopy(absl::string_view text) {
  char* copy = static_cast<char*>(malloc(text.size() + 1));
  if (copy == nullptr) return nullptr;
  memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  return copy;
}

int FailMaking(char** error, int code, absl::string_view message) {
  if (error != nullptr) *error = MallocCopy(message);
  return code;
}

int FailMaking(char** error, const absl::Status& status) {
  return FailMaking(error, CodeFor(status.code()), status.message());
}

}  // namespace capi
}  // namespace ipclock

extern "C" const char* ipclock_strerror(int code) {
  switch (code) {
    case 0:
      return "success";
    case IPCLOCK_BUSY:
      return "the lock is held by another owner";
    case -EINVAL:
      return "invalid argument";
    case -EACCES:
      return "permission denied";
    case -EAGAIN:
      return "store unavailable for now";
    case -ENOENT:
      return "not found";
    case -EEXIST:
      return "already exists";
    case -ENOSPC:
      return "resource exhausted";
    case -ENOSYS:
      return "store not in this build";
    case -EPERM:
      return "operation not permitted";
    case IPCLOCK_LOST:
      return "the lock was lost";
    case -ETIMEDOUT:
      return "store operation timed out";
    case -ENOMEM:
      return "out of memory";
    case -ENODATA:
      return "no fencing token";
    case -EIO:
      return "store error";
    default:
      return "unknown ipclock error code";
  }
}
