// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The tests of redis_store_test.cc that live in redis_store_test_server.cc, for its table.

#ifndef IPCLOCK_TESTS_REDIS_STORE_TEST_H_
#define IPCLOCK_TESTS_REDIS_STORE_TEST_H_

namespace ipclock_test {

// The tests of redis_store_test_server.cc, in one declaration, for the suite's table.
void SelectDb(void**), Auth(void**), AclUser(void**), UnixSocket(void**), NoscriptRecovery(void**),
    RoundTrips(void**), SecretHidesNames(void**), ParseLockNaming(void**),
    WarnsOnceWithoutSecret(void**), ServerKilledWhileHeldAndWaiting(void**),
    WaiterRecoversAfterRestart(void**), LostReplyIsReleasedLater(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_REDIS_STORE_TEST_H_
