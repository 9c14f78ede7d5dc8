// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Reading configuration files and /proc entries whole.

#ifndef IPCLOCK_PLATFORM_SMALL_FILE_H_
#define IPCLOCK_PLATFORM_SMALL_FILE_H_

#include <cstddef>
#include <optional>
#include <string>

namespace ipclock {

// The content of `path`, read to its end (so /proc files, whose size reads
// as 0, work too). nullopt if it is missing, unreadable, a directory, or
// larger than `max_bytes`: callers treat all of these as "absent".
std::optional<std::string> ReadSmallFile(const std::string& path,
                                         size_t max_bytes = 1 << 20);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SMALL_FILE_H_
