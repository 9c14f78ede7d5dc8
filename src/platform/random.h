// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#ifndef IPCLOCK_PLATFORM_RANDOM_H_
#define IPCLOCK_PLATFORM_RANDOM_H_

#include <cstddef>

#include "absl/status/status.h"

namespace ipclock {

// Fills `buf` with `len` bytes from getrandom(2), falling back to
// /dev/urandom where the system call is refused (old seccomp profiles).
absl::Status FillRandom(void* buf, size_t len);

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_RANDOM_H_
