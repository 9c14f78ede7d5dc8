// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The tests of cli_test.cc that live in cli_test_terminal.cc and
// cli_test_tries.cc, for its table.

#ifndef IPCLOCK_TESTS_CLI_TEST_H_
#define IPCLOCK_TESTS_CLI_TEST_H_

namespace ipclock_test {

// The tests of cli_test_terminal.cc, in one declaration, for the suite's table.
void test_exit_status_classes(void**), test_wait_covers_a_server_that_is_down(void**),
    test_wait_covers_a_postgres_server_that_is_down(void**),
    test_no_wait_option_waits_out_a_restart(void**), test_control_bytes_are_escaped(void**),
    test_list_escapes_process_names(void**), test_utf8_names_shown_as_they_are(void**), test_process_group_follows_the_terminal(void**),
    test_file_refuses_a_fifo(void**), test_flock1_holds_ipclock_waits(void**),
    test_ipclock_holds_flock1_waits(void**), test_flock1_shared_locks(void**);

// The tests of cli_test_tries.cc.
void test_a_contended_run_tries_once_then_blocks(void**),
    test_a_contended_run_on_semaphores_tries_once(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_CLI_TEST_H_
