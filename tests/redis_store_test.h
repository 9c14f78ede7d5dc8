// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The tests of redis_store_test.cc that live in redis_store_test_server.cc, for its table.

#ifndef IPCLOCK_TESTS_REDIS_STORE_TEST_H_
#define IPCLOCK_TESTS_REDIS_STORE_TEST_H_

namespace ipclock_test {

void SelectDb(void** state);
void Auth(void** state);
void AclUser(void** state);
void UnixSocket(void** state);
void NoscriptRecovery(void** state);
void RoundTrips(void** state);
void SecretHidesNames(void** state);
void ParseLockNaming(void** state);
void WarnsOnceWithoutSecret(void** state);
void ServerKilledWhileHeldAndWaiting(void** state);
void WaiterRecoversAfterRestart(void** state);
void LostReplyIsReleasedLater(void** state);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_REDIS_STORE_TEST_H_
