// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table of the tests that live in redis_store_test_server.cc, for
// redis_store_test.cc's.

#ifndef IPCLOCK_TESTS_REDIS_STORE_TEST_H_
#define IPCLOCK_TESTS_REDIS_STORE_TEST_H_

#include <vector>

struct CMUnitTest;

namespace ipclock_test {

// The tests of redis_store_test_server.cc, in their order in the suite's table.
std::vector<CMUnitTest> ServerSideTests();

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_REDIS_STORE_TEST_H_
