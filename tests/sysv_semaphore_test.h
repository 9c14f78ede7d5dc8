// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the source files of the SysV semaphore suite share: the store and
// the set of a resource's key; and the tests that live in
// sysv_semaphore_test_php.cc, for sysv_semaphore_test.cc's table.

#ifndef IPCLOCK_TESTS_SYSV_SEMAPHORE_TEST_H_
#define IPCLOCK_TESTS_SYSV_SEMAPHORE_TEST_H_

#include <stdint.h>

#include <memory>
#include <string>

#include "ipclock/store.h"

namespace ipclock_test {

std::shared_ptr<ipclock::Store> OpenStore(const std::string& dsn = "semaphore");

int32_t KeyOf(const std::string& resource);

// The id of the set of the resource's key, or -1 (semget without IPC_CREAT).
int SemidOf(const std::string& resource);
bool SetExists(const std::string& resource);

// The tests of sysv_semaphore_test_php.cc, in one declaration, for the suite's table.
void PhpHoldsIpclockWaits(void**), IpclockHoldsPhpIsRefused(void**),
    PhpHolderKilledReportedToLaterProcess(void**), PhpHolderKilledReportedToWaiter(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_SYSV_SEMAPHORE_TEST_H_
