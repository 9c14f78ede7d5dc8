// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "core/named_file.h"

#include <errno.h>
#include <iterator>
#include <limits.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "absl/strings/str_cat.h"
#include "ipclock/errors.h"
#include "platform/errors.h"
#include "platform/files.h"
#include "platform/path_kind.h"

namespace ipclock {

namespace {

static_assert(kMaxUnixSocketPath + 1 == sizeof(sockaddr_un{}.sun_path),
              "a socket address holds the path and its NUL");

absl::string_view KindName(FileKind kind) {
  static constexpr absl::string_view kNames[] = {
      "a regular file", "a Unix socket", "a directory"};  // by FileKind
  static_assert(std::size(kNames) ==
                static_cast<size_t>(FileKind::kDirectory) + 1);
  return kNames[static_cast<size_t>(kind)];
}

bool IsKind(mode_t type, FileKind kind) {
  switch (kind) {
    case FileKind::kRegularFile:
      return S_ISREG(type);
    case FileKind::kUnixSocket:
      return S_ISSOCK(type);
    case FileKind::kDirectory:
      return S_ISDIR(type);
  }
  return false;
}

}  // namespace

absl::Status CheckNamedFile(absl::string_view where, absl::string_view label,
                            const std::string& path, FileKind kind, IfMissing if_missing) {
  auto fault = [&](FaultClass c, absl::string_view why) {
    return absl::Status(CodeOf(c), absl::StrCat("ipclock: ", where, ": ", label, ": ", why));
  };
  const absl::string_view expected = KindName(kind);
  if (path.empty() || path[0] != '/') {
    return fault(FaultClass::kConfiguration, absl::StrCat("expected ", expected,
                                                          " named by an absolute path"));
  }
  if (path.size() >= PATH_MAX) {
    return fault(FaultClass::kConfiguration,
                 absl::StrCat("the path is ", path.size(), " bytes, more than ", PATH_MAX - 1));
  }
  if (kind == FileKind::kUnixSocket && path.size() > kMaxUnixSocketPath) {
    return fault(FaultClass::kConfiguration,
                 absl::StrCat("the path is ", path.size(), " bytes, more than the ",
                              kMaxUnixSocketPath, " a Unix socket address holds"));
  }
  const PathKind found = InspectPathKind(path);
  if (found.error == ENOENT) {
    if (found.kernel_fs) {
      return fault(FaultClass::kConfiguration,
                   absl::StrCat("expected ", expected, ", not a path on a kernel filesystem "
                                "(/proc, /sys, ...)"));
    }
    switch (if_missing) {
      case IfMissing::kFine:
        return absl::OkStatus();
      case IfMissing::kConfiguration:
        return fault(FaultClass::kConfiguration,
                     absl::StrCat("expected ", expected, ", and nothing is there"));
    }
  }
  if (found.error != 0) {
    const absl::StatusCode code = ErrnoToCode(found.error);
    return absl::Status(
        code == absl::StatusCode::kPermissionDenied || code == absl::StatusCode::kInvalidArgument
            ? code
            : absl::StatusCode::kInternal,
        absl::StrCat("ipclock: ", where, ": ", label, ": cannot look at it (stat: ",
                     ErrnoName(found.error), ")"));
  }
  if (!IsKind(found.type, kind)) {
    return fault(FaultClass::kConfiguration,
                 absl::StrCat("expected ", expected, ", not a ", FileTypeName(found.type)));
  }
  if (found.kernel_fs) {
    return fault(FaultClass::kConfiguration,
                 absl::StrCat("expected ", expected, ", not a file of a kernel filesystem "
                              "(/proc, /sys, ...)"));
  }
  return absl::OkStatus();
}

}  // namespace ipclock
