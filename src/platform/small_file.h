// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Reading configuration files, secrets and /proc entries whole.
//
// Every such file may be one that someone else controls (an image tree being
// audited, a secret path in a DSN): it is opened O_NONBLOCK, so that opening
// a FIFO never waits for a writer, and checked with fstat(2) before anything
// is read, so that a FIFO, a device or a directory is refused rather than
// read from or waited on.

#ifndef IPCLOCK_PLATFORM_SMALL_FILE_H_
#define IPCLOCK_PLATFORM_SMALL_FILE_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ipclock {

// The content of the regular file `path`, read to its end (so /proc files,
// whose size reads as 0, work too). The OS error for a file that cannot be
// opened or read; FailedPrecondition for one that is not a regular file;
// ResourceExhausted for one larger than `max_bytes`. `who` starts messages.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            size_t max_bytes,
                                            absl::string_view who);

// The same, with every failure read as "absent" (nullopt), for files whose
// absence has a meaning of its own (a missing logind.conf is systemd's
// defaults).
std::optional<std::string> ReadSmallFile(const std::string& path,
                                         size_t max_bytes = 1 << 20);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SMALL_FILE_H_
