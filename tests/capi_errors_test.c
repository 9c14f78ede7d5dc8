/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The C API's error channels, from C11 (c.h, "ERRORS"): each lock handle
 * keeps its own last failure, whatever other handles and threads do; the
 * calls that make a handle give theirs to their caller only; nothing is
 * shared between threads. Run under TSan by `tools/dev test`.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_util.h"
#include "ipclock/c.h"

/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static void each_lock_keeps_its_own_error(void **state) {
  (void)state;
  ipclock_store *store = capi_open("in-memory");
  ipclock_lock *a = capi_lock(store, "a", NULL);
  ipclock_lock *b = capi_lock(store, "b", NULL);
  assert_string_equal(ipclock_lock_error(a), "");
  assert_int_equal(ipclock_lock_acquire(a, 0x40, 0), -EINVAL);
  assert_int_equal(ipclock_lock_refresh(b, -1), -EINVAL);
  assert_non_null(strstr(ipclock_lock_error(a), "flags 64"));
  assert_non_null(strstr(ipclock_lock_error(b), "negative"));

  /* A lock that could not be made: the message goes to the caller, not to
   * the store or any lock. */
  ipclock_lock *none = (ipclock_lock *)1;
  char *why = NULL;
  assert_int_equal(ipclock_lock_create(store, "", 0, NULL, &none, &why), -EINVAL);
  assert_null(none);
  assert_non_null(strstr(why, "empty"));
  free(why);
  assert_non_null(strstr(ipclock_lock_error(a), "flags 64"));
  assert_non_null(strstr(ipclock_lock_error(b), "negative"));

  /* A success leaves `*error` NULL, whatever it held; a NULL `error` is
   * fine either way. */
  why = (char *)1;
  ipclock_lock *c = NULL;
  assert_int_equal(ipclock_lock_create(store, "c", 1, NULL, &c, &why), 0);
  assert_null(why);
  assert_int_equal(ipclock_lock_create(store, "", 0, NULL, &none, NULL), -EINVAL);
  /* Successes do not clear a handle's last failure. */
  assert_int_equal(ipclock_lock_acquire(a, 0, 0), 0);
  assert_non_null(strstr(ipclock_lock_error(a), "flags 64"));
  assert_string_equal(ipclock_lock_error(c), "");

  ipclock_lock_destroy(a);
  ipclock_lock_destroy(b);
  ipclock_lock_destroy(c);
  ipclock_store_close(store);
}

/* Threads share one store handle, as c.h allows, each with a lock handle
 * of its own. In each round every thread acquires and releases its lock,
 * fails it on purpose in a way only it does, and fails to make a lock with
 * a name of a length only it uses; then, once all have failed (a barrier),
 * each reads its lock's message. With any channel shared between threads,
 * all but one would read another's. */
#define THREADS 6
#define ROUNDS 200

struct thread_arg {
  ipclock_store *store;
  pthread_barrier_t *turn; /* every thread's failures, then every read */
  int index;
  int failures; /* what went wrong, for the main thread to report */
  char first_failure[256];
};

static void note(struct thread_arg *arg, const char *what, const char *text) {
  if (arg->failures++ == 0) {
    snprintf(arg->first_failure, sizeof(arg->first_failure), "%s: %s", what, text);
  }
}

/* One round's work before the barrier: its acquisition, its failures. */
static void fail_on_purpose(struct thread_arg *arg, ipclock_lock *own, unsigned bad_flag,
                            const char *my_size, const char *too_long) {
  if (ipclock_lock_acquire(own, 0, 1000) != 0) note(arg, "acquire", ipclock_lock_error(own));
  if (ipclock_lock_release(own) != 0) note(arg, "release", ipclock_lock_error(own));
  if (ipclock_lock_acquire(own, bad_flag, 0) != -EINVAL) note(arg, "bad flags", "accepted");
  ipclock_lock *bad = (ipclock_lock *)1;
  char *why = NULL;
  int rc = ipclock_lock_create(arg->store, too_long, 1100 + (size_t)arg->index, NULL, &bad, &why);
  if (rc != -EINVAL || bad != NULL || why == NULL) {
    note(arg, "too long", "accepted");
  } else if (strstr(why, my_size) == NULL) {
    note(arg, "another thread's failure to make a lock", why);
  }
  free(why);
}

static void *errors_thread(void *p) {
  struct thread_arg *arg = p;
  char name[64];
  char mine[64];    /* in the message of this thread's lock failure */
  char my_size[32]; /* in the message of this thread's failures to make one */
  char too_long[1100 + THREADS];
  memset(too_long, 'x', sizeof(too_long));
  const unsigned bad_flag = 1u << (8 + arg->index);
  snprintf(mine, sizeof(mine), "flags %u", bad_flag);
  snprintf(my_size, sizeof(my_size), "is %d bytes", 1100 + arg->index);
  snprintf(name, sizeof(name), "errors-%d", arg->index);
  ipclock_lock *own = NULL;
  if (ipclock_lock_create(arg->store, name, strlen(name), NULL, &own, NULL) != 0) {
    note(arg, "create", name);
  }
  for (int round = 0; round < ROUNDS; ++round) {
    if (own != NULL) fail_on_purpose(arg, own, bad_flag, my_size, too_long);
    pthread_barrier_wait(arg->turn);
    if (own != NULL && strstr(ipclock_lock_error(own), mine) == NULL) {
      note(arg, "another lock's failure", ipclock_lock_error(own));
    }
    pthread_barrier_wait(arg->turn);
  }
  ipclock_lock_destroy(own);
  return NULL;
}

static void errors_stay_with_their_thread(void **state) {
  (void)state;
  char dsn[128];
  capi_flock_dsn(dsn, sizeof(dsn), "?removeipc=ignore");
  ipclock_store *store = capi_open(dsn);
  pthread_t threads[THREADS];
  struct thread_arg args[THREADS];
  memset(args, 0, sizeof(args));
  pthread_barrier_t turn;
  assert_int_equal(pthread_barrier_init(&turn, NULL, THREADS), 0);
  for (int i = 0; i < THREADS; ++i) {
    args[i].store = store;
    args[i].turn = &turn;
    args[i].index = i;
    assert_int_equal(pthread_create(&threads[i], NULL, errors_thread, &args[i]), 0);
  }
  for (int i = 0; i < THREADS; ++i) assert_int_equal(pthread_join(threads[i], NULL), 0);
  pthread_barrier_destroy(&turn);
  for (int i = 0; i < THREADS; ++i) {
    if (args[i].failures != 0) {
      fail_msg("thread %d: %d failures, the first: %s", i, args[i].failures,
               args[i].first_failure);
    }
  }
  ipclock_store_close(store);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_lock_keeps_its_own_error),
      cmocka_unit_test(errors_stay_with_their_thread),
  };
  return cmocka_run_group_tests_name("capi_errors", tests, capi_setup, capi_teardown);
}
