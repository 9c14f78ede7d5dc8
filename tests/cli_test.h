// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The tests of cli_test.cc that live in cli_test_terminal.cc, for its table.

#ifndef IPCLOCK_TESTS_CLI_TEST_H_
#define IPCLOCK_TESTS_CLI_TEST_H_

namespace ipclock_test {

void test_exit_status_classes(void** state);
void test_wait_covers_a_server_that_is_down(void** state);
void test_wait_covers_a_postgres_server_that_is_down(void** state);
void test_control_bytes_are_escaped(void** state);
void test_list_escapes_process_names(void** state);
void test_process_group_follows_the_terminal(void** state);
void test_file_refuses_a_fifo(void** state);
void test_flock1_holds_ipclock_waits(void** state);
void test_ipclock_holds_flock1_waits(void** state);
void test_flock1_shared_locks(void** state);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_CLI_TEST_H_
