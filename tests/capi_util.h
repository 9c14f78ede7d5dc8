/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Helpers of the C API's suites (capi_test.c, capi_watch_test.c,
 * capi_errors_test.c), in C11: stores and locks that fail the test when
 * they cannot be made, a temp dir per suite, clocks, and the lock files of
 * flock stores. Forked children must not use the helpers that assert; they
 * check with plain ifs and report through their exit codes. */

#ifndef IPCLOCK_TESTS_CAPI_UTIL_H_
#define IPCLOCK_TESTS_CAPI_UTIL_H_

#include <stddef.h>
#include <sys/types.h>

#include "ipclock/c.h"

/* The suite's temp dir, made by capi_setup() and removed by
 * capi_teardown() (CMocka group fixtures). */
extern char capi_dir[64];
int capi_setup(void **state);
int capi_teardown(void **state);

/* "flock://<capi_dir><query>". */
void capi_flock_dsn(char *buf, size_t size, const char *query);

/* Open a store or make a lock, failing the test (with the message) if they
 * cannot. */
ipclock_store *capi_open(const char *dsn);
ipclock_lock *capi_lock(ipclock_store *store, const char *name,
                        const struct ipclock_lock_options *opts);
/* capi_open() of "flock://<capi_dir>". */
ipclock_store *capi_open_flock(void);

/* Test fixtures (cmocka_unit_test_setup_teardown): a store in `*state`
 * for the test, "in-memory" or capi_open_flock()'s, closed after it. */
int capi_setup_memory_store(void **state);
int capi_setup_flock_store(void **state);
int capi_teardown_store(void **state);
/* A CMUnitTest of `test` with such a store. */
#define capi_memory_store_test(test) \
  cmocka_unit_test_setup_teardown(test, capi_setup_memory_store, capi_teardown_store)
#define capi_flock_store_test(test) \
  cmocka_unit_test_setup_teardown(test, capi_setup_flock_store, capi_teardown_store)

/* Deletes the lock file of `resource` (Symfony's name for it: its
 * readable part and a hash) in capi_dir; 0, or -1 if there was not exactly
 * one. Safe in a forked child. */
int capi_unlink_lock_file(const char *resource);

/* Whether `fd` turns readable within `timeout_ms` (poll(2)); 0 polls once. */
int capi_readable(int fd, int timeout_ms);

/* For a forked child: a lock on `name` through a store of its own, opened
 * from `dsn`; the child exits 10 if the store does not open, 11 if the lock
 * cannot be made. */
ipclock_lock *capi_child_lock(const char *dsn, const char *name);

/* Waits for `pid` and returns its exit code, or -1 if it did not exit. */
int capi_exit_code(pid_t pid);

double capi_now(void); /* seconds on the monotonic clock */
void capi_sleep_ms(long ms);

#endif /* IPCLOCK_TESTS_CAPI_UTIL_H_ */
