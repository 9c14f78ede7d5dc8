/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The C API's locks, from C11: NULL arguments, contention as IPCLOCK_BUSY,
 * waits woken by a release, leases, fencing, owner death, a lost lock, and
 * the codes of store errors. Stores are in capi_store_test.c, watches in
 * capi_watch_test.c, the error channels in capi_errors_test.c. Forked
 * children report through their exit codes and never call CMocka
 * assertions.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capi_util.h"
#include "ipclock/c.h"
#include "ipclock_config.h"

/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static void null_arguments(void **state) {
  ipclock_store *store = *state;
  ipclock_lock *lock = capi_lock(store, "null-args", NULL);
  ipclock_store *s_out = (ipclock_store *)1;
  ipclock_lock *l_out = (ipclock_lock *)1;
  uint64_t fence = 0;

  char *why = NULL;

  assert_int_equal(ipclock_store_open(NULL, NULL, &s_out, &why), -EINVAL);
  assert_null(s_out);
  assert_non_null(strstr(why, "NULL"));
  free(why);
  assert_int_equal(ipclock_store_open("in-memory", NULL, NULL, NULL), -EINVAL);

  assert_int_equal(ipclock_lock_create(NULL, "x", 1, NULL, &l_out, NULL), -EINVAL);
  assert_null(l_out);
  assert_int_equal(ipclock_lock_create(store, NULL, 1, NULL, &l_out, NULL), -EINVAL);
  assert_int_equal(ipclock_lock_create(store, "x", 1, NULL, NULL, NULL), -EINVAL);
  assert_int_equal(ipclock_lock_from_serialized(store, NULL, NULL, &l_out, NULL), -EINVAL);

  assert_int_equal(ipclock_lock_acquire(NULL, 0, 0), -EINVAL);
  assert_int_equal(ipclock_lock_refresh(NULL, 0), -EINVAL);
  assert_int_equal(ipclock_lock_release(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_is_acquired(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_is_expired(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_remaining_ms(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_fence(NULL, &fence), -EINVAL);
  assert_int_equal(ipclock_lock_fence(lock, NULL), -EINVAL);
  assert_int_equal(ipclock_lock_previous_owner_died(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_check(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_abandon(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_serialize(NULL, &why), -EINVAL);
  assert_null(why);
  assert_int_equal(ipclock_lock_serialize(lock, NULL), -EINVAL);
  assert_null(ipclock_lock_resource(NULL, NULL));
  assert_non_null(ipclock_lock_error(NULL));
  assert_string_equal(ipclock_store_name(NULL), "");
  assert_string_equal(ipclock_store_describe(NULL), "");
  assert_int_equal(ipclock_store_capabilities(NULL), 0);
  assert_int_equal(ipclock_store_scope(NULL), -EINVAL);
  assert_int_equal(ipclock_store_set_diagnostic_handler(NULL, NULL, NULL), -EINVAL);
  ipclock_lock_destroy(NULL);
  ipclock_store_close(NULL);

  ipclock_lock_destroy(lock);
}

static void bad_lock_arguments(void **state) {
  ipclock_store *store = *state;
  ipclock_lock *lock = NULL;
  char big[2000];
  memset(big, 'a', sizeof(big));
  char *why = NULL;
  assert_int_equal(ipclock_lock_create(store, "", 0, NULL, &lock, &why), -EINVAL);
  assert_null(lock);
  assert_non_null(strstr(why, "empty"));
  free(why);
  assert_int_equal(ipclock_lock_create(store, big, sizeof(big), NULL, &lock, NULL), -EINVAL);
  /* ... unless the options raise the limit. */
  struct ipclock_lock_options roomy = {.max_resource_bytes = sizeof(big)};
  assert_int_equal(ipclock_lock_create(store, big, sizeof(big), &roomy, &lock, NULL), 0);
  ipclock_lock_destroy(lock);

  /* Names are byte strings: a NUL inside is part of the name. */
  assert_int_equal(ipclock_lock_create(store, "a\0b", 3, NULL, &lock, NULL), 0);
  size_t len = 0;
  assert_memory_equal(ipclock_lock_resource(lock, &len), "a\0b", 4);
  assert_int_equal(len, 3);
  assert_int_equal(ipclock_lock_acquire(lock, 0x80, 0), -EINVAL);
  assert_non_null(strstr(ipclock_lock_error(lock), "flags"));
  assert_int_equal(ipclock_lock_refresh(lock, -5), -EINVAL);
  ipclock_lock_destroy(lock);

  /* Counting needs a counting store. */
  ipclock_store *files = capi_open_flock();
  struct ipclock_lock_options two = {.permits = 2};
  assert_int_equal(ipclock_lock_create(files, "x", 1, &two, &lock, &why), -EINVAL);
  assert_non_null(strstr(why, "permits"));
  free(why);
  ipclock_store_close(files);
}

/* Acquire, contention, timed wait, release, on one store. */
static void contention(const char *dsn) {
  ipclock_store *store = capi_open(dsn);
  ipclock_lock *a = capi_lock(store, "contended", NULL);
  ipclock_lock *b = capi_lock(store, "contended", NULL);

  assert_int_equal(ipclock_lock_is_acquired(a), 0);
  assert_int_equal(ipclock_lock_acquire(a, IPCLOCK_NONBLOCK, 0), 0);
  assert_int_equal(ipclock_lock_is_acquired(a), 1);
  assert_int_equal(ipclock_lock_acquire(a, 0, 0), 0); /* already held */

  assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  assert_int_equal(ipclock_lock_acquire(b, 0, 0), IPCLOCK_BUSY);
  double start = capi_now();
  assert_int_equal(ipclock_lock_acquire(b, 0, 100), IPCLOCK_BUSY);
  double waited = capi_now() - start;
  if (waited < 0.09 || waited > 5) fail_msg("waited %.3f s for 100 ms", waited);
  assert_int_equal(ipclock_lock_is_acquired(b), 0);

  assert_int_equal(ipclock_lock_release(a), 0);
  assert_int_equal(ipclock_lock_release(a), 0); /* not held: still 0 */
  assert_int_equal(ipclock_lock_is_acquired(a), 0);
  assert_int_equal(ipclock_lock_acquire(b, 0, -1), 0);
  assert_int_equal(ipclock_lock_release(b), 0);

  /* Readers share; a writer waits for them. */
  assert_int_equal(ipclock_lock_acquire(a, IPCLOCK_SHARED | IPCLOCK_NONBLOCK, 0), 0);
  assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_SHARED, 1000), 0);
  ipclock_lock *c = capi_lock(store, "contended", NULL);
  assert_int_equal(ipclock_lock_acquire(c, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);

  /* Destroying a holder releases. */
  ipclock_lock_destroy(a);
  ipclock_lock_destroy(b);
  assert_int_equal(ipclock_lock_acquire(c, 0, 1000), 0);
  /* A lock outlives its closed store handle. */
  ipclock_store_close(store);
  assert_int_equal(ipclock_lock_is_acquired(c), 1);
  assert_int_equal(ipclock_lock_release(c), 0);
  ipclock_lock_destroy(c);
}

static void contention_in_memory(void **state) {
  (void)state;
  contention("in-memory");
}

static void contention_flock(void **state) {
  (void)state;
  char dsn[128];
  capi_flock_dsn(dsn, sizeof(dsn), "");
  contention(dsn);
}

/* A waiter wakes when the holder releases, well before its wait runs out. */
static void wait_is_woken_by_release(void **state) {
  (void)state;
  char dsn[128];
  capi_flock_dsn(dsn, sizeof(dsn), "");
  ipclock_store *store = capi_open(dsn);
  ipclock_lock *lock = capi_lock(store, "handoff", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    ipclock_lock *l = capi_child_lock(dsn, "handoff");
    double start = capi_now();
    int rc = ipclock_lock_acquire(l, 0, 10000);
    if (rc != 0) _exit(12);
    if (capi_now() - start > 5) _exit(13);
    _exit(0);
  }
  capi_sleep_ms(200);
  assert_int_equal(ipclock_lock_release(lock), 0);
  assert_int_equal(capi_exit_code(pid), 0);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

static void keep_on_destroy(void **state) {
  ipclock_store *store = *state;
  struct ipclock_lock_options keep = {.keep_on_destroy = 1};
  ipclock_lock *a = capi_lock(store, "kept", &keep);
  ipclock_lock *b = capi_lock(store, "kept", NULL);
  assert_int_equal(ipclock_lock_acquire(a, 0, 0), 0);
  assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  ipclock_lock_destroy(a);
  assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  ipclock_lock_destroy(b);
}

static void counting(void **state) {
  ipclock_store *store = *state;
  struct ipclock_lock_options two = {.permits = 2};
  ipclock_lock *a = capi_lock(store, "pool", &two);
  ipclock_lock *b = capi_lock(store, "pool", &two);
  ipclock_lock *c = capi_lock(store, "pool", &two);
  assert_int_equal(ipclock_lock_acquire(a, 0, 0), 0);
  assert_int_equal(ipclock_lock_acquire(b, 0, 0), 0);
  assert_int_equal(ipclock_lock_acquire(c, 0, 0), IPCLOCK_BUSY);
  ipclock_lock_destroy(a);
  assert_int_equal(ipclock_lock_acquire(c, 0, 0), 0);
  ipclock_lock_destroy(b);
  ipclock_lock_destroy(c);
}

static void leases(void **state) {
  (void)state;
  ipclock_store *store = capi_open("in-memory");
  struct ipclock_lock_options short_lease = {.ttl_ms = 150};
  ipclock_lock *lock = capi_lock(store, "leased", &short_lease);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  int64_t left = ipclock_lock_remaining_ms(lock);
  if (left < 0 || left > 150) fail_msg("remaining %lld ms", (long long)left);
  assert_int_equal(ipclock_lock_is_expired(lock), 0);

  assert_int_equal(ipclock_lock_refresh(lock, 10000), 0);
  left = ipclock_lock_remaining_ms(lock);
  if (left < 9000 || left > 10000) fail_msg("remaining %lld ms", (long long)left);
  assert_int_equal(ipclock_lock_refresh(lock, 0), 0); /* back to the TTL */
  assert_true(ipclock_lock_remaining_ms(lock) <= 150);

  capi_sleep_ms(250);
  assert_int_equal(ipclock_lock_is_expired(lock), 1);
  assert_int_equal(ipclock_lock_remaining_ms(lock), 0);
  int rc = ipclock_lock_refresh(lock, 1000);
  assert_int_equal(rc, -ECANCELED);
  assert_true(strlen(ipclock_lock_error(lock)) > 0);
  ipclock_lock_destroy(lock);

  /* The default lease is 300 s. */
  lock = capi_lock(store, "default-lease", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  left = ipclock_lock_remaining_ms(lock);
  if (left < 299000 || left > 300000) fail_msg("remaining %lld ms", (long long)left);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);

  /* flock locks have no lease. */
  store = capi_open_flock();
  lock = capi_lock(store, "no-lease", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_remaining_ms(lock), -1);
  assert_int_equal(ipclock_lock_is_expired(lock), 0);
  assert_int_equal(ipclock_lock_refresh(lock, 5), 0);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

static void fencing(void **state) {
  (void)state;
  ipclock_store *store = capi_open_flock();
  ipclock_lock *lock = capi_lock(store, "fenced", NULL);
  uint64_t first = 0, second = 0;
  assert_int_equal(ipclock_lock_fence(lock, &first), -ENODATA); /* not held */
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_fence(lock, &first), 0);
  assert_int_equal(ipclock_lock_release(lock), 0);
  assert_int_equal(ipclock_lock_fence(lock, &second), -ENODATA);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_fence(lock, &second), 0);
  assert_true(second > first);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);

  /* Without the holder record there is no token. */
  char dsn[128];
  capi_flock_dsn(dsn, sizeof(dsn), "?record=false");
  store = capi_open(dsn);
  lock = capi_lock(store, "unfenced", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_fence(lock, &first), -ENODATA);
  assert_int_equal(ipclock_lock_previous_owner_died(lock), 0);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

static void previous_owner_died(void **state) {
  (void)state;
  char dsn[128];
  capi_flock_dsn(dsn, sizeof(dsn), "");
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* Dies holding the lock: no release, no destroy. */
    ipclock_lock *l = capi_child_lock(dsn, "doomed");
    if (ipclock_lock_acquire(l, 0, 0) != 0) _exit(12);
    _exit(0);
  }
  assert_int_equal(capi_exit_code(pid), 0);

  ipclock_store *store = capi_open(dsn);
  ipclock_lock *lock = capi_lock(store, "doomed", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 1000), 0);
  assert_int_equal(ipclock_lock_previous_owner_died(lock), 1);
  /* A clean release clears it for the next holder. */
  assert_int_equal(ipclock_lock_release(lock), 0);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_previous_owner_died(lock), 0);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

/* A lock whose file is deleted while held is lost: its release says so. */
static void release_of_a_lost_lock(void **state) {
  ipclock_store *store = *state;
  ipclock_lock *lock = capi_lock(store, "lost-file", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, IPCLOCK_NONBLOCK, 0), 0);
  assert_int_equal(capi_unlink_lock_file("lost-file"), 0);
  /* The flock store skips the check when the last one is under 1 ms old
   * (flock_store.h), so that a lock reused at once costs no system call. */
  usleep(2000);
  assert_int_equal(ipclock_lock_release(lock), IPCLOCK_LOST);
  assert_non_null(strstr(ipclock_lock_error(lock), "lost-file"));
  assert_int_equal(ipclock_lock_is_acquired(lock), 0);
  ipclock_lock_destroy(lock);
}

static void store_errors_map_to_codes(void **state) {
  (void)state;
  /* Exact-path naming: a path in a missing dir fails with -ENOENT, and the
   * message names the store, the resource and the OS error. */
  ipclock_store *store = capi_open("flock:?naming=path");
  ipclock_lock *lock = capi_lock(store, "/nonexistent-ipclock-dir/x", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), -ENOENT);
  assert_int_equal(ipclock_lock_is_acquired(lock), 0);
  const char *msg = ipclock_lock_error(lock);
  assert_non_null(strstr(msg, "nonexistent-ipclock-dir"));
  assert_non_null(strstr(msg, "ENOENT"));
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

static void strerror_covers_every_code(void **state) {
  (void)state;
  const int codes[] = {0,       IPCLOCK_BUSY, -EINVAL, -EACCES,     -EAGAIN,
                       -ENOENT, -EEXIST,      -ENOSPC, -ENOSYS,     -EPERM,
                       IPCLOCK_LOST, -ETIMEDOUT, -ENOMEM, -ENODATA, -EIO};
  const char *unknown = ipclock_strerror(-123456);
  assert_non_null(unknown);
  for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); ++i) {
    const char *text = ipclock_strerror(codes[i]);
    assert_non_null(text);
    assert_true(strlen(text) > 0);
    if (strcmp(text, unknown) == 0) fail_msg("code %d has no text", codes[i]);
    for (size_t j = 0; j < i; ++j) {
      assert_string_not_equal(text, ipclock_strerror(codes[j]));
    }
  }
  assert_string_equal(ipclock_strerror(IPCLOCK_BUSY), "the lock is held by another owner");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      capi_memory_store_test(null_arguments),
      capi_memory_store_test(bad_lock_arguments),
      cmocka_unit_test(contention_in_memory),
      cmocka_unit_test(contention_flock),
      cmocka_unit_test(wait_is_woken_by_release),
      capi_memory_store_test(keep_on_destroy),
      capi_memory_store_test(counting),
      cmocka_unit_test(leases),
      cmocka_unit_test(fencing),
      cmocka_unit_test(previous_owner_died),
      capi_flock_store_test(release_of_a_lost_lock),
      cmocka_unit_test(store_errors_map_to_codes),
      cmocka_unit_test(strerror_covers_every_code),
  };
  return cmocka_run_group_tests_name("capi", tests, capi_setup, capi_teardown);
}
