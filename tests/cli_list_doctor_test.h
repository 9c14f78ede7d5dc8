// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the files of cli_list_doctor_test share: a helper, and the tests that
// live in its other files, for its table.

#ifndef IPCLOCK_TESTS_CLI_LIST_DOCTOR_TEST_H_
#define IPCLOCK_TESTS_CLI_LIST_DOCTOR_TEST_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ipclock_test {

// Runs `ipclock list ARGS --json` until its output contains `needle`, for
// what a holder or waiter sets up after it started (a waiter queues in the
// kernel a moment after it starts). Returns the last output.
std::string ListJsonUntil(std::vector<std::string> args, absl::string_view needle);

// The tests of cli_list_doctor_test_doctor.cc, in one declaration, for the suite's table.
void test_doctor_removeipc(void**), test_doctor_unsafe_and_cleaned_dirs(void**),
    test_doctor_usage_errors(void**), test_doctor_never_waits_on_fifos(void**),
    test_doctor_checks_every_dir_above_the_lock_dir(void**),
    test_cli_uses_public_headers_only(void**), test_help_lists_every_option(void**),
    test_man_page_covers_every_option(void**), test_help_names_the_stores_of_this_build(void**),
    test_exit_statuses_in_help_and_man_page(void**), test_man_page_renders_cleanly(void**);

// The tests of cli_list_doctor_test_metrics.cc.
void test_list_metrics_one_series_per_semaphore_lock(void**),
    test_list_metrics_six_stores_and_a_failure(void**), test_list_metrics_example_unit(void**),
    test_list_metrics_usage(void**);

// The tests of cli_list_doctor_test_semaphore.cc.
void test_list_semaphore_slots(void**), test_list_semaphore_dead_slot(void**),
    test_list_semaphore_sysv_set(void**), test_list_semaphore_usage(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_CLI_LIST_DOCTOR_TEST_H_
