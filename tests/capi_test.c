/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The C API, from C11: every function, NULL arguments, bad DSNs, contention
 * as IPCLOCK_BUSY, leases, fencing, owner death, a lost lock, and one store
 * handle shared by threads (run under TSan by `tools/dev test`). Forked children report
 * through their exit codes and never call CMocka assertions.
 */

#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipclock/c.h"
#include "ipclock_config.h"

/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static char g_dir[64];

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static ipclock_store *open_store(const char *dsn) {
  ipclock_store *store = NULL;
  int rc = ipclock_store_open(dsn, &store);
  if (rc != 0) fail_msg("open %s: %d %s", dsn, rc, ipclock_last_error());
  assert_non_null(store);
  return store;
}

static ipclock_lock *make_lock(ipclock_store *store, const char *name,
                               const struct ipclock_lock_options *opts) {
  ipclock_lock *lock = NULL;
  int rc = ipclock_lock_create(store, name, strlen(name), opts, &lock);
  if (rc != 0) fail_msg("create %s: %d %s", name, rc, ipclock_store_error(store));
  assert_non_null(lock);
  return lock;
}

static void flock_dsn(char *buf, size_t size, const char *query) {
  snprintf(buf, size, "flock://%s%s", g_dir, query);
}

static void null_arguments(void **state) {
  (void)state;
  ipclock_store *store = open_store("in-memory");
  ipclock_lock *lock = make_lock(store, "null-args", NULL);
  ipclock_store *s_out = (ipclock_store *)1;
  ipclock_lock *l_out = (ipclock_lock *)1;
  uint64_t fence = 0;

  assert_int_equal(ipclock_store_open(NULL, &s_out), -EINVAL);
  assert_null(s_out);
  assert_int_equal(ipclock_store_open("in-memory", NULL), -EINVAL);
  assert_non_null(strstr(ipclock_last_error(), "NULL"));

  assert_int_equal(ipclock_lock_create(NULL, "x", 1, NULL, &l_out), -EINVAL);
  assert_null(l_out);
  assert_int_equal(ipclock_lock_create(store, NULL, 1, NULL, &l_out), -EINVAL);
  assert_int_equal(ipclock_lock_create(store, "x", 1, NULL, NULL), -EINVAL);

  assert_int_equal(ipclock_lock_acquire(NULL, 0, 0), -EINVAL);
  assert_int_equal(ipclock_lock_refresh(NULL, 0), -EINVAL);
  assert_int_equal(ipclock_lock_release(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_is_acquired(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_is_expired(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_remaining_ms(NULL), -EINVAL);
  assert_int_equal(ipclock_lock_fence(NULL, &fence), -EINVAL);
  assert_int_equal(ipclock_lock_fence(lock, NULL), -EINVAL);
  assert_int_equal(ipclock_lock_previous_owner_died(NULL), -EINVAL);
  assert_non_null(ipclock_lock_error(NULL));
  assert_non_null(ipclock_store_error(NULL));
  ipclock_lock_destroy(NULL);
  ipclock_store_close(NULL);

  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

static void bad_dsns(void **state) {
  (void)state;
  ipclock_store *store = (ipclock_store *)1;
  assert_int_equal(ipclock_store_open("", &store), -EINVAL);
  assert_null(store);
  assert_int_equal(ipclock_store_open("no-such-store", &store), -EINVAL);
  assert_non_null(strstr(ipclock_last_error(), "no-such-store"));
  assert_int_equal(ipclock_store_open("flock:relative/dir", &store), -EINVAL);
  assert_int_equal(ipclock_store_open("in-memory:?bogus=1", &store), -EINVAL);
  assert_non_null(strstr(ipclock_last_error(), "bogus"));
#if !IPCLOCK_HAVE_REDIS
  assert_int_equal(ipclock_store_open("redis://127.0.0.1:1", &store), -ENOSYS);
  assert_null(store);
#endif
}

#if IPCLOCK_HAVE_MEMCACHED || IPCLOCK_HAVE_ZOOKEEPER
/* A remote store through its DSN: the test server's (tools/test-servers)
 * DSN from `env` plus `query`; skipped without it, failed under CI=true. */
static void remote_store(const char *env, const char *query, int has_fence) {
  const char *base = getenv(env);
  if (base == NULL || base[0] == '\0') {
    const char *ci = getenv("CI");
    if (ci != NULL && strcmp(ci, "true") == 0) fail_msg("%s is unset under CI=true", env);
    print_message("skipped: %s is unset\n", env);
    skip();
  }
  char dsn[512];
  char name[64];
  snprintf(dsn, sizeof(dsn), "%s%s", base, query);
  snprintf(name, sizeof(name), "capi-remote-%d", (int)getpid());
  ipclock_store *store = open_store(dsn);
  ipclock_lock *a = make_lock(store, name, NULL);
  ipclock_lock *b = make_lock(store, name, NULL);
  assert_int_equal(ipclock_lock_acquire(a, IPCLOCK_NONBLOCK, 0), 0);
  assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  uint64_t fence = 0;
  assert_int_equal(ipclock_lock_fence(a, &fence), has_fence ? 0 : -ENODATA);
  assert_int_equal(ipclock_lock_release(a), 0);
  assert_int_equal(ipclock_lock_acquire(b, 0, 1000), 0);
  assert_int_equal(ipclock_lock_release(b), 0);
  ipclock_lock_destroy(a);
  ipclock_lock_destroy(b);
  ipclock_store_close(store);
}
#endif

static void memcached_store(void **state) {
  (void)state;
#if IPCLOCK_HAVE_MEMCACHED
  remote_store("IPCLOCK_TEST_MEMCACHED", "?secret=none", 0);
#else
  ipclock_store *store = (ipclock_store *)1;
  assert_int_equal(ipclock_store_open("memcached://127.0.0.1:1", &store), -ENOSYS);
  assert_null(store);
#endif
}

static void zookeeper_store(void **state) {
  (void)state;
#if IPCLOCK_HAVE_ZOOKEEPER
  remote_store("IPCLOCK_TEST_ZOOKEEPER", "?secret=none", 1);
#else
  ipclock_store *store = (ipclock_store *)1;
  assert_int_equal(ipclock_store_open("zookeeper://127.0.0.1:1", &store), -ENOSYS);
  assert_null(store);
#endif
}

static void bad_lock_arguments(void **state) {
  (void)state;
  ipclock_store *store = open_store("in-memory");
  ipclock_lock *lock = NULL;
  char big[2000];
  memset(big, 'a', sizeof(big));
  assert_int_equal(ipclock_lock_create(store, "", 0, NULL, &lock), -EINVAL);
  assert_null(lock);
  assert_true(strlen(ipclock_store_error(store)) > 0);
  assert_int_equal(ipclock_lock_create(store, big, sizeof(big), NULL, &lock), -EINVAL);

  /* Names are byte strings: a NUL inside is part of the name. */
  assert_int_equal(ipclock_lock_create(store, "a\0b", 3, NULL, &lock), 0);
  assert_int_equal(ipclock_lock_acquire(lock, 0x80, 0), -EINVAL);
  assert_non_null(strstr(ipclock_lock_error(lock), "flags"));
  assert_int_equal(ipclock_lock_refresh(lock, -5), -EINVAL);
  ipclock_lock_destroy(lock);

  /* Counting needs a counting store. */
  char dsn[128];
  flock_dsn(dsn, sizeof(dsn), "");
  ipclock_store *files = open_store(dsn);
  struct ipclock_lock_options two = {.permits = 2};
  assert_int_equal(ipclock_lock_create(files, "x", 1, &two, &lock), -EINVAL);
  assert_non_null(strstr(ipclock_store_error(files), "permits"));
  ipclock_store_close(files);
  ipclock_store_close(store);
}

/* Acquire, contention, timed wait, release, on one store. */
static void contention(const char *dsn) {
  ipclock_store *store = open_store(dsn);
  ipclock_lock *a = make_lock(store, "contended", NULL);
  ipclock_lock *b = make_lock(store, "contended", NULL);

  assert_int_equal(ipclock_lock_is_acquired(a), 0);
  assert_int_equal(ipclock_lock_acquire(a, IPCLOCK_NONBLOCK, 0), 0);
  assert_int_equal(ipclock_lock_is_acquired(a), 1);
  assert_int_equal(ipclock_lock_acquire(a, 0, 0), 0); /* already held */

  assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  assert_int_equal(ipclock_lock_acquire(b, 0, 0), IPCLOCK_BUSY);
  double start = now_seconds();
  assert_int_equal(ipclock_lock_acquire(b, 0, 100), IPCLOCK_BUSY);
  double waited = now_seconds() - start;
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
  ipclock_lock *c = make_lock(store, "contended", NULL);
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
  flock_dsn(dsn, sizeof(dsn), "");
  contention(dsn);
}

/* A waiter wakes when the holder releases, well before its wait runs out. */
static void wait_is_woken_by_release(void **state) {
  (void)state;
  char dsn[128];
  flock_dsn(dsn, sizeof(dsn), "");
  ipclock_store *store = open_store(dsn);
  ipclock_lock *lock = make_lock(store, "handoff", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    ipclock_store *s = NULL;
    ipclock_lock *l = NULL;
    if (ipclock_store_open(dsn, &s) != 0) _exit(10);
    if (ipclock_lock_create(s, "handoff", 7, NULL, &l) != 0) _exit(11);
    double start = now_seconds();
    int rc = ipclock_lock_acquire(l, 0, 10000);
    if (rc != 0) _exit(12);
    if (now_seconds() - start > 5) _exit(13);
    _exit(0);
  }
  sleep_ms(200);
  assert_int_equal(ipclock_lock_release(lock), 0);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

static void keep_on_destroy(void **state) {
  (void)state;
  ipclock_store *store = open_store("in-memory");
  struct ipclock_lock_options keep = {.keep_on_destroy = 1};
  ipclock_lock *a = make_lock(store, "kept", &keep);
  ipclock_lock *b = make_lock(store, "kept", NULL);
  assert_int_equal(ipclock_lock_acquire(a, 0, 0), 0);
  assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  ipclock_lock_destroy(a);
  assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  ipclock_lock_destroy(b);
  ipclock_store_close(store);
}

static void counting(void **state) {
  (void)state;
  ipclock_store *store = open_store("in-memory");
  struct ipclock_lock_options two = {.permits = 2};
  ipclock_lock *a = make_lock(store, "pool", &two);
  ipclock_lock *b = make_lock(store, "pool", &two);
  ipclock_lock *c = make_lock(store, "pool", &two);
  assert_int_equal(ipclock_lock_acquire(a, 0, 0), 0);
  assert_int_equal(ipclock_lock_acquire(b, 0, 0), 0);
  assert_int_equal(ipclock_lock_acquire(c, 0, 0), IPCLOCK_BUSY);
  ipclock_lock_destroy(a);
  assert_int_equal(ipclock_lock_acquire(c, 0, 0), 0);
  ipclock_lock_destroy(b);
  ipclock_lock_destroy(c);
  ipclock_store_close(store);
}

static void leases(void **state) {
  (void)state;
  ipclock_store *store = open_store("in-memory");
  struct ipclock_lock_options short_lease = {.ttl_ms = 150};
  ipclock_lock *lock = make_lock(store, "leased", &short_lease);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  int64_t left = ipclock_lock_remaining_ms(lock);
  if (left < 0 || left > 150) fail_msg("remaining %lld ms", (long long)left);
  assert_int_equal(ipclock_lock_is_expired(lock), 0);

  assert_int_equal(ipclock_lock_refresh(lock, 10000), 0);
  left = ipclock_lock_remaining_ms(lock);
  if (left < 9000 || left > 10000) fail_msg("remaining %lld ms", (long long)left);
  assert_int_equal(ipclock_lock_refresh(lock, 0), 0); /* back to the TTL */
  assert_true(ipclock_lock_remaining_ms(lock) <= 150);

  sleep_ms(250);
  assert_int_equal(ipclock_lock_is_expired(lock), 1);
  assert_int_equal(ipclock_lock_remaining_ms(lock), 0);
  int rc = ipclock_lock_refresh(lock, 1000);
  assert_int_equal(rc, -ECANCELED);
  assert_true(strlen(ipclock_lock_error(lock)) > 0);
  ipclock_lock_destroy(lock);

  /* The default lease is 300 s. */
  lock = make_lock(store, "default-lease", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  left = ipclock_lock_remaining_ms(lock);
  if (left < 299000 || left > 300000) fail_msg("remaining %lld ms", (long long)left);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);

  /* flock locks have no lease. */
  char dsn[128];
  flock_dsn(dsn, sizeof(dsn), "");
  store = open_store(dsn);
  lock = make_lock(store, "no-lease", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_remaining_ms(lock), -1);
  assert_int_equal(ipclock_lock_is_expired(lock), 0);
  assert_int_equal(ipclock_lock_refresh(lock, 5), 0);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

static void fencing(void **state) {
  (void)state;
  char dsn[128];
  flock_dsn(dsn, sizeof(dsn), "");
  ipclock_store *store = open_store(dsn);
  ipclock_lock *lock = make_lock(store, "fenced", NULL);
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
  flock_dsn(dsn, sizeof(dsn), "?record=false");
  store = open_store(dsn);
  lock = make_lock(store, "unfenced", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_fence(lock, &first), -ENODATA);
  assert_int_equal(ipclock_lock_previous_owner_died(lock), 0);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

static void previous_owner_died(void **state) {
  (void)state;
  char dsn[128];
  flock_dsn(dsn, sizeof(dsn), "");
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* Dies holding the lock: no release, no destroy. */
    ipclock_store *s = NULL;
    ipclock_lock *l = NULL;
    if (ipclock_store_open(dsn, &s) != 0) _exit(10);
    if (ipclock_lock_create(s, "doomed", 6, NULL, &l) != 0) _exit(11);
    if (ipclock_lock_acquire(l, 0, 0) != 0) _exit(12);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);

  ipclock_store *store = open_store(dsn);
  ipclock_lock *lock = make_lock(store, "doomed", NULL);
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
  (void)state;
  char dsn[128];
  flock_dsn(dsn, sizeof(dsn), "");
  ipclock_store *store = open_store(dsn);
  ipclock_lock *lock = make_lock(store, "lost-file", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, IPCLOCK_NONBLOCK, 0), 0);
  /* Symfony's file name for "lost-file": the readable part and a hash. */
  char pattern[256];
  snprintf(pattern, sizeof(pattern), "%s/sf.lost-file.*.lock", g_dir);
  glob_t found;
  assert_int_equal(glob(pattern, 0, NULL, &found), 0);
  assert_int_equal(found.gl_pathc, 1);
  assert_int_equal(unlink(found.gl_pathv[0]), 0);
  globfree(&found);
  /* The flock store skips the check when the last one is under 1 ms old
   * (flock_store.h), so that a lock reused at once costs no system call. */
  usleep(2000);
  assert_int_equal(ipclock_lock_release(lock), -ECANCELED);
  assert_non_null(strstr(ipclock_lock_error(lock), "lost-file"));
  assert_int_equal(ipclock_lock_is_acquired(lock), 0);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

/* Threads sharing one store handle, as c.h allows: each makes locks, fails
 * on purpose (which sets the store's error text), and reads the store's and
 * its own last error, all at once. Under TSan a handle whose error text were
 * written without a lock is a reported race; everywhere, each thread's
 * ipclock_last_error() must stay its own. */
#define SHARED_THREADS 6
#define SHARED_ROUNDS 300

struct shared_store_arg {
  ipclock_store *store;
  int index;
  int failures; /* what went wrong, for the main thread to report */
};

static void *shared_store_thread(void *p) {
  struct shared_store_arg *arg = p;
  char name[64];
  char too_long[1100];
  memset(too_long, 'x', sizeof(too_long));
  for (int round = 0; round < SHARED_ROUNDS; ++round) {
    snprintf(name, sizeof(name), "shared-%d-%d", arg->index, round % 7);
    ipclock_lock *lock = NULL;
    if (ipclock_lock_create(arg->store, name, strlen(name), NULL, &lock) != 0) {
      ++arg->failures;
      continue;
    }
    int rc = ipclock_lock_acquire(lock, 0, 1000);
    if (rc != 0) ++arg->failures;
    if (rc == 0 && ipclock_lock_release(lock) != 0) ++arg->failures;
    ipclock_lock_destroy(lock);

    /* Odd threads fail with an empty name, even ones with one too long. */
    ipclock_lock *bad = NULL;
    rc = arg->index % 2 ? ipclock_lock_create(arg->store, name, 0, NULL, &bad)
                        : ipclock_lock_create(arg->store, too_long, sizeof(too_long), NULL, &bad);
    if (rc != -EINVAL || bad != NULL) ++arg->failures;
    const char *mine = ipclock_last_error();
    if (strstr(mine, arg->index % 2 ? "empty" : "1100") == NULL) ++arg->failures;
    /* Any thread's failure; it must be a whole message of one of them. */
    const char *any = ipclock_store_error(arg->store);
    if (strstr(any, "empty") == NULL && strstr(any, "1100") == NULL) ++arg->failures;
  }
  return NULL;
}

static void store_shared_by_threads(void **state) {
  (void)state;
  char dsn[128];
  flock_dsn(dsn, sizeof(dsn), "?removeipc=ignore");
  ipclock_store *store = open_store(dsn);
  pthread_t threads[SHARED_THREADS];
  struct shared_store_arg args[SHARED_THREADS];
  for (int i = 0; i < SHARED_THREADS; ++i) {
    args[i].store = store;
    args[i].index = i;
    args[i].failures = 0;
    assert_int_equal(pthread_create(&threads[i], NULL, shared_store_thread, &args[i]), 0);
  }
  for (int i = 0; i < SHARED_THREADS; ++i) assert_int_equal(pthread_join(threads[i], NULL), 0);
  for (int i = 0; i < SHARED_THREADS; ++i) {
    if (args[i].failures != 0) fail_msg("thread %d: %d failures", i, args[i].failures);
  }
  ipclock_store_close(store);
}

static void store_errors_map_to_codes(void **state) {
  (void)state;
  /* Exact-path naming: a path in a missing dir fails with -ENOENT, and the
   * message names the store, the resource and the OS error. */
  ipclock_store *store = open_store("flock:?naming=path");
  ipclock_lock *lock = make_lock(store, "/nonexistent-ipclock-dir/x", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), -ENOENT);
  assert_int_equal(ipclock_lock_is_acquired(lock), 0);
  const char *msg = ipclock_lock_error(lock);
  assert_non_null(strstr(msg, "nonexistent-ipclock-dir"));
  assert_non_null(strstr(msg, "ENOENT"));
  assert_string_equal(ipclock_last_error(), msg);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

static void strerror_covers_every_code(void **state) {
  (void)state;
  const int codes[] = {0,       IPCLOCK_BUSY, -EINVAL, -EACCES, -EAGAIN,
                       -ENOENT, -EEXIST,      -ENOSPC, -ENOSYS, -EPERM,
                       -ECANCELED, -ETIMEDOUT, -ENOMEM, -ENODATA, -EIO};
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

/* The SQL stores through the C API: MySQL named locks and the table store
 * on the test servers (tools/test-servers; skipped without them, failing
 * under CI=true) and on SQLite. */
static void sql_stores(void **state) {
  (void)state;
  char sqlite_dsn[128];
  snprintf(sqlite_dsn, sizeof(sqlite_dsn), "sqlite://%s/capi.db", g_dir);
  const char *vars[] = {"IPCLOCK_TEST_MYSQL", "IPCLOCK_TEST_MYSQL_TABLE",
                        "IPCLOCK_TEST_POSTGRES_TABLE", NULL};
  const char *dsns[] = {getenv(vars[0]), getenv(vars[1]), getenv(vars[2]),
                        IPCLOCK_HAVE_SQLITE ? sqlite_dsn : NULL};
  const int built[] = {IPCLOCK_HAVE_MYSQL, IPCLOCK_HAVE_MYSQL, IPCLOCK_HAVE_POSTGRES,
                       IPCLOCK_HAVE_SQLITE};
  for (int i = 0; i < 4; ++i) {
    if (!built[i]) continue;
    if (dsns[i] == NULL || dsns[i][0] == '\0') {
      const char *ci = getenv("CI");
      if (ci != NULL && strcmp(ci, "true") == 0) fail_msg("%s is not set (CI=true)", vars[i]);
      print_message("%s is not set: skipped\n", vars[i]);
      continue;
    }
    ipclock_store *store = open_store(dsns[i]);
    ipclock_lock *a = make_lock(store, "capi-sql", NULL);
    ipclock_lock *b = make_lock(store, "capi-sql", NULL);
    assert_int_equal(ipclock_lock_acquire(a, IPCLOCK_NONBLOCK, 0), 0);
    assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
    assert_int_equal(ipclock_lock_acquire(b, 0, 100), IPCLOCK_BUSY);
    assert_int_equal(ipclock_lock_release(a), 0);
    assert_int_equal(ipclock_lock_acquire(b, 0, 1000), 0);
    assert_int_equal(ipclock_lock_release(b), 0);
    ipclock_lock_destroy(a);
    ipclock_lock_destroy(b);
    ipclock_store_close(store);
  }
}

static int setup(void **state) {
  (void)state;
  strcpy(g_dir, "/tmp/ipclock-capi-XXXXXX");
  return mkdtemp(g_dir) == NULL ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(null_arguments),
      cmocka_unit_test(bad_dsns),
      cmocka_unit_test(bad_lock_arguments),
      cmocka_unit_test(contention_in_memory),
      cmocka_unit_test(contention_flock),
      cmocka_unit_test(wait_is_woken_by_release),
      cmocka_unit_test(keep_on_destroy),
      cmocka_unit_test(counting),
      cmocka_unit_test(leases),
      cmocka_unit_test(fencing),
      cmocka_unit_test(previous_owner_died),
      cmocka_unit_test(release_of_a_lost_lock),
      cmocka_unit_test(store_shared_by_threads),
      cmocka_unit_test(store_errors_map_to_codes),
      cmocka_unit_test(strerror_covers_every_code),
      cmocka_unit_test(sql_stores),
      cmocka_unit_test(memcached_store),
      cmocka_unit_test(zookeeper_store),
  };
  return cmocka_run_group_tests_name("capi", tests, setup, teardown);
}
