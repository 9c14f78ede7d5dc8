// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/errors.h"

#include <errno.h>
#include <string.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ipclock {

absl::StatusCode ErrnoToCode(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::StatusCode::kPermissionDenied;
    case ENOENT:
    case EIDRM:
      return absl::StatusCode::kNotFound;
    case EEXIST:
      return absl::StatusCode::kAlreadyExists;
    // A file of the wrong type where one is named: a configuration fault.
    case EINVAL:
    case ENAMETOOLONG:
    case EISDIR:
    case ENOTDIR:
    case ELOOP:  // a symlink where O_NOFOLLOW refused one
    case ENXIO:  // a socket, or a device without its driver
    case ESPIPE:  // a FIFO where a file to seek in was expected
    case ENODEV:
      return absl::StatusCode::kInvalidArgument;
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case ENOLCK:
    case ERANGE:
      return absl::StatusCode::kResourceExhausted;
    case ETIMEDOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case EAGAIN:
    case EINTR:
    case ECONNREFUSED:
    case ECONNRESET:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EPIPE:
      return absl::StatusCode::kUnavailable;
    case ENOSYS:
    case EOPNOTSUPP:
      return absl::StatusCode::kUnimplemented;
    case EDEADLK:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::string_view ErrnoName(int err) {
  // strerrorname_np arrived in glibc 2.32; Debian 12 has 2.36.
  const char* name = strerrorname_np(err);
  return name != nullptr ? absl::string_view(name) : absl::string_view("E?");
}

std::string QuoteResource(absl::string_view resource) {
  constexpr size_t kMaxShown = 96;
  if (resource.size() <= kMaxShown) {
    return absl::StrCat("\"", absl::CHexEscape(resource), "\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(resource.substr(0, kMaxShown)),
                      "\"... (", resource.size(), " bytes)");
}

static std::string Prefix(absl::string_view store, absl::string_view resource) {
  if (resource.empty()) return absl::StrCat(store, ": ");
  return absl::StrCat(store, ": resource ", QuoteResource(resource), ": ");
}

absl::Status ErrnoError(int err, absl::string_view store,
                        absl::string_view resource, absl::string_view what) {
  char buf[128];
  const char* text = strerror_r(err, buf, sizeof(buf));
  return absl::Status(ErrnoToCode(err),
                      absl::StrCat(Prefix(store, resource), what, ": ", text,
                                   " [", ErrnoName(err), "]"));
}

absl::Status StoreError(absl::StatusCode code, absl::string_view store,
                        absl::string_view resource, absl::string_view message) {
  return absl::Status(code, absl::StrCat(Prefix(store, resource), message));
}

absl::Status InContext(absl::string_view context, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("ipclock: ", context, ": ",
                                                  absl::StripPrefix(status.message(), "ipclock: ")));
}

absl::Status NotHeldError(absl::string_view store, absl::string_view resource) {
  return StoreError(absl::StatusCode::kAborted, store, resource, "the lock is not held");
}

absl::Status ParentAcquiredError(absl::string_view store, absl::string_view resource,
                                 absl::string_view what, absl::string_view consequence) {
  return StoreError(absl::StatusCode::kFailedPrecondition, store, resource,
                    absl::StrCat("this ", what, " was acquired by the parent of this forked "
                                 "process; ", consequence));
}

}  // namespace ipclock
