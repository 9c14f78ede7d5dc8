// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the examples in the public headers call without defining: a
// program's own functions, and the system APIs they are shown beside.

#ifndef IPCLOCK_TESTS_HEADER_EXAMPLES_PRELUDE_H_
#define IPCLOCK_TESTS_HEADER_EXAMPLES_PRELUDE_H_

#include <sys/epoll.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipclock/ipclock.h"

int CountRows();
void UseResource(ipclock::Lock& lock);
// sd-journal, as a daemon would call it.
#define LOG_WARNING 4
#define LOG_INFO 6
int sd_journal_print(int priority, const char* format, ...);

#endif  // IPCLOCK_TESTS_HEADER_EXAMPLES_PRELUDE_H_
