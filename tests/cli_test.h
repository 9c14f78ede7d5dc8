// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The table of the tests that live in cli_test_terminal.cc, for
// cli_test.cc's.

#ifndef IPCLOCK_TESTS_CLI_TEST_H_
#define IPCLOCK_TESTS_CLI_TEST_H_

#include <vector>

struct CMUnitTest;

namespace ipclock_test {

// The tests of cli_test_terminal.cc, in their order in the suite's table.
std::vector<CMUnitTest> TerminalTests();

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_CLI_TEST_H_
