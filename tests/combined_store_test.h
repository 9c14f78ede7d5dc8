// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The tests of combined_store_test.cc that live in
// combined_store_test_frozen.cc, for length.

#ifndef IPCLOCK_TESTS_COMBINED_STORE_TEST_H_
#define IPCLOCK_TESTS_COMBINED_STORE_TEST_H_

namespace ipclock_test {

// With a Redis server of the suite's own (redis_fixture.h).
void FrozenMemberHoldsUpNoLoss(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_COMBINED_STORE_TEST_H_
