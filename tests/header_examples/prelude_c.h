/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * What the C header's examples call without defining. */

#ifndef IPCLOCK_TESTS_HEADER_EXAMPLES_PRELUDE_C_H_
#define IPCLOCK_TESTS_HEADER_EXAMPLES_PRELUDE_C_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#endif /* IPCLOCK_TESTS_HEADER_EXAMPLES_PRELUDE_C_H_ */
