// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/scoped_fd.h"

#include <unistd.h>

namespace ipclock {

void ScopedFd::Close(int fd) { ::close(fd); }

}  // namespace ipclock
