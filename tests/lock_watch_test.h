// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The tests of lock_watch_test kept in lock_watch_test_fork.cc.

#ifndef IPCLOCK_TESTS_LOCK_WATCH_TEST_H_
#define IPCLOCK_TESTS_LOCK_WATCH_TEST_H_

namespace ipclock_test {

void ForkedChildWatchesItsOwnLocks(void**);
void ForkedChildsCopyNeverWaitsForTheWatch(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_LOCK_WATCH_TEST_H_
