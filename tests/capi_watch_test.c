/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The C API finding lost locks, from C11: ipclock_lock_check() and a watch
 * on lock files deleted under their holder (the descriptor readable until
 * the loss is acknowledged, the callback on the watch's thread, the store's
 * handler when there is no callback, the release saying the loss), leases
 * renewed by a watch, misuse, and fork(): a child's copy of a watch does
 * nothing to its parent's locks or descriptor, and the child's own watch
 * works. Forked children report through their exit codes.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capi_util.h"
#include "ipclock/c.h"

/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* What a watch's callback saw. */
struct lost_log {
  pthread_mutex_t mu;
  int calls;
  ipclock_lock *lock;
  int kind;
  int code;
  char resource[64];
  char message[512];
  pthread_t thread;
};

static void on_lost(ipclock_lock *lock, const struct ipclock_diagnostic *d, void *arg) {
  struct lost_log *log = arg;
  size_t len = 0;
  const char *resource = ipclock_lock_resource(lock, &len);
  pthread_mutex_lock(&log->mu);
  ++log->calls;
  log->lock = lock;
  log->kind = d->kind;
  log->code = d->code;
  snprintf(log->resource, sizeof(log->resource), "%.*s", (int)len, resource);
  snprintf(log->message, sizeof(log->message), "%s", d->message);
  log->thread = pthread_self();
  pthread_mutex_unlock(&log->mu);
}

static int lost_calls(struct lost_log *log) {
  pthread_mutex_lock(&log->mu);
  int calls = log->calls;
  pthread_mutex_unlock(&log->mu);
  return calls;
}

static ipclock_watch *make_watch(int64_t interval_ms, struct lost_log *log) {
  struct ipclock_watch_options opts = {.check_interval_ms = interval_ms,
                                       .on_lost = log != NULL ? on_lost : NULL,
                                       .on_lost_arg = log};
  ipclock_watch *watch = NULL;
  char *why = NULL;
  int rc = ipclock_watch_create(&opts, &watch, &why);
  if (rc != 0) fail_msg("watch: %d %s", rc, why);
  assert_non_null(watch);
  return watch;
}

static ipclock_lock *held_lock(ipclock_store *store, const char *name,
                               const struct ipclock_lock_options *opts) {
  ipclock_lock *lock = capi_lock(store, name, opts);
  assert_int_equal(ipclock_lock_acquire(lock, IPCLOCK_NONBLOCK, 0), 0);
  return lock;
}

/* A held lock, put on `watch`. */
static ipclock_lock *watched_lock(ipclock_watch *watch, ipclock_store *store, const char *name,
                                  const struct ipclock_lock_options *opts) {
  ipclock_lock *lock = held_lock(store, name, opts);
  assert_int_equal(ipclock_watch_add(watch, lock), 0);
  return lock;
}

static void check_finds_a_deleted_lock_file(void **state) {
  ipclock_store *store = *state;
  ipclock_lock *lock = capi_lock(store, "checked", NULL);
  assert_int_equal(ipclock_lock_check(lock), -EPERM); /* not held */
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_check(lock), 0);

  assert_int_equal(capi_unlink_lock_file("checked"), 0);
  /* The flock store skips a check under 1 ms after the last (flock_store.h). */
  capi_sleep_ms(2);
  assert_int_equal(ipclock_lock_check(lock), IPCLOCK_LOST);
  const char *why = ipclock_lock_error(lock);
  if (strstr(why, "checked") == NULL || strstr(why, "deleted") == NULL) {
    fail_msg("the loss is not named: %s", why);
  }
  /* Found lost, the handle counts as released. */
  assert_int_equal(ipclock_lock_is_acquired(lock), 0);
  assert_int_equal(ipclock_lock_check(lock), -EPERM);
  assert_int_equal(ipclock_lock_release(lock), 0);
  /* Another lock on the name makes a new file and gets it at once. */
  ipclock_lock *next = held_lock(store, "checked", NULL);
  ipclock_lock_destroy(next);
  ipclock_lock_destroy(lock);
}

/* A watch finds a lock file deleted under its holder by itself: the
 * descriptor turns readable and stays so until the loss is taken, the
 * callback runs once, on the watch's thread, and the release says it. */
static void watch_finds_a_deleted_lock_file(void **state) {
  (void)state;
  struct lost_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  ipclock_watch *watch = make_watch(200, &log);
  int fd = ipclock_watch_fd(watch);
  assert_true(fd >= 0);
  ipclock_store *store = capi_open_flock();
  ipclock_lock *lock = watched_lock(watch, store, "watched", NULL);
  ipclock_lock *bystander = watched_lock(watch, store, "bystander", NULL);
  assert_false(capi_readable(fd, 500)); /* checks ran; nothing lost */
  assert_int_equal(lost_calls(&log), 0);

  assert_int_equal(capi_unlink_lock_file("watched"), 0);
  assert_true(capi_readable(fd, 10000));
  assert_true(capi_readable(fd, 0)); /* level-triggered */
  /* The callback ran before the descriptor turned readable. */
  pthread_mutex_lock(&log.mu);
  assert_int_equal(log.calls, 1);
  assert_ptr_equal(log.lock, lock);
  assert_int_equal(log.kind, IPCLOCK_DIAG_LOCK_LOST);
  assert_int_equal(log.code, IPCLOCK_LOST);
  assert_string_equal(log.resource, "watched");
  assert_non_null(strstr(log.message, "deleted"));
  assert_false(pthread_equal(log.thread, pthread_self()));
  pthread_mutex_unlock(&log.mu);

  assert_int_equal(ipclock_lock_is_acquired(lock), 0);
  assert_int_equal(ipclock_lock_is_acquired(bystander), 1);
  uint64_t fence = 0;
  assert_int_equal(ipclock_lock_fence(lock, &fence), -ENODATA);
  assert_int_equal(ipclock_lock_fence(bystander, &fence), 0);
  assert_int_equal(ipclock_lock_check(lock), IPCLOCK_LOST);

  ipclock_lock *lost = NULL;
  assert_int_equal(ipclock_watch_next_lost(watch, &lost), 1);
  assert_ptr_equal(lost, lock);
  assert_false(capi_readable(fd, 0));
  assert_int_equal(ipclock_watch_next_lost(watch, &lost), 0);
  assert_null(lost);

  /* Lost, but its owner's to release; then an ordinary lock again. */
  assert_int_equal(ipclock_lock_release(lock), IPCLOCK_LOST);
  assert_non_null(strstr(ipclock_lock_error(lock), "deleted"));
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_check(lock), 0);
  assert_int_equal(lost_calls(&log), 1);

  /* Destroying the watch leaves its locks held, unwatched. */
  ipclock_watch_destroy(watch);
  assert_int_equal(ipclock_lock_check(bystander), 0);
  assert_int_equal(ipclock_lock_release(bystander), 0);
  ipclock_lock_destroy(bystander);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
}

/* The watch may tell on a thread of its own: the count is atomic. */
static void count_lost(const struct ipclock_diagnostic *d, void *arg) {
  if (d->kind == IPCLOCK_DIAG_LOCK_LOST && d->code == IPCLOCK_LOST) {
    __atomic_add_fetch((int *)arg, 1, __ATOMIC_SEQ_CST);
  }
}

static int load_count(int *count) { return __atomic_load_n(count, __ATOMIC_SEQ_CST); }

/* Without a callback a loss goes to the store's handler; a check of a
 * watched lock finds it at once; a release acknowledges it. */
static void check_of_a_watched_lock(void **state) {
  (void)state;
  ipclock_watch *watch = make_watch(600000, NULL);
  int fd = ipclock_watch_fd(watch);
  char dsn[128];
  capi_flock_dsn(dsn, sizeof(dsn), "");
  int told = 0;
  struct ipclock_store_options opts = {.diagnostics = count_lost, .diagnostics_arg = &told};
  ipclock_store *store = NULL;
  assert_int_equal(ipclock_store_open(dsn, &opts, &store, NULL), 0);
  ipclock_lock *lock = watched_lock(watch, store, "checked-watched", NULL);
  assert_int_equal(ipclock_lock_check(lock), 0);

  assert_int_equal(capi_unlink_lock_file("checked-watched"), 0);
  capi_sleep_ms(2);
  assert_int_equal(ipclock_lock_check(lock), IPCLOCK_LOST);
  assert_int_equal(load_count(&told), 1); /* told before the check returned */
  assert_true(capi_readable(fd, 0));
  assert_int_equal(ipclock_lock_release(lock), IPCLOCK_LOST);
  assert_false(capi_readable(fd, 0));
  ipclock_lock *lost = (ipclock_lock *)1;
  assert_int_equal(ipclock_watch_next_lost(watch, &lost), 0);
  assert_null(lost);
  assert_int_equal(load_count(&told), 1);
  ipclock_lock_destroy(lock);
  ipclock_watch_destroy(watch);
  ipclock_store_close(store);
}

/* A watch renews leases: a watched lock outlives its TTL several times over,
 * and one left alone runs out. */
static void watch_renews_leases(void **state) {
  ipclock_store *store = *state;
  struct ipclock_lock_options lease = {.ttl_ms = 1200};
  ipclock_lock *renewed = held_lock(store, "renewed", &lease);
  ipclock_lock *left = held_lock(store, "left", &lease);
  ipclock_watch *watch = make_watch(0, NULL);
  assert_int_equal(ipclock_watch_add(watch, renewed), 0);
  capi_sleep_ms(2500);

  assert_int_equal(ipclock_lock_is_expired(left), 1);
  assert_int_equal(ipclock_lock_is_expired(renewed), 0);
  int64_t remaining = ipclock_lock_remaining_ms(renewed);
  if (remaining <= 0 || remaining > 1200) fail_msg("%lld ms left", (long long)remaining);
  assert_int_equal(ipclock_lock_check(renewed), 0);
  ipclock_lock *rival = capi_lock(store, "renewed", NULL);
  assert_int_equal(ipclock_lock_acquire(rival, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  ipclock_lock_destroy(rival);
  rival = held_lock(store, "left", NULL);
  ipclock_lock_destroy(rival);

  assert_int_equal(ipclock_lock_release(renewed), 0);
  assert_int_equal(ipclock_lock_release(left), IPCLOCK_LOST);
  ipclock_lock_destroy(renewed);
  ipclock_lock_destroy(left);
  ipclock_watch_destroy(watch);
}

static void watch_misuse(void **state) {
  (void)state;
  ipclock_watch *watch = (ipclock_watch *)1;
  char *why = NULL;
  struct ipclock_watch_options backwards = {.check_interval_ms = -5};
  assert_int_equal(ipclock_watch_create(&backwards, &watch, &why), -EINVAL);
  assert_null(watch);
  assert_non_null(strstr(why, "-5"));
  free(why);
  assert_int_equal(ipclock_watch_create(NULL, NULL, NULL), -EINVAL);

  watch = make_watch(0, NULL);
  ipclock_watch *other = make_watch(0, NULL);
  ipclock_store *store = capi_open("in-memory");
  ipclock_lock *lock = capi_lock(store, "misused", NULL);
  ipclock_lock *got = (ipclock_lock *)1;
  assert_int_equal(ipclock_watch_fd(NULL), -EINVAL);
  assert_int_equal(ipclock_watch_add(NULL, lock), -EINVAL);
  assert_int_equal(ipclock_watch_add(watch, NULL), -EINVAL);
  assert_int_equal(ipclock_watch_remove(watch, NULL), -EINVAL);
  assert_int_equal(ipclock_watch_next_lost(NULL, &got), -EINVAL);
  assert_null(got);
  assert_int_equal(ipclock_watch_next_lost(watch, NULL), -EINVAL);
  ipclock_watch_destroy(NULL);

  /* Only a held lock, and on one watch at a time. */
  assert_int_equal(ipclock_watch_add(watch, lock), -EPERM);
  assert_non_null(strstr(ipclock_lock_error(lock), "not held"));
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_watch_add(watch, lock), 0);
  assert_int_equal(ipclock_watch_add(watch, lock), -EPERM);
  assert_int_equal(ipclock_watch_add(other, lock), -EPERM);
  assert_non_null(strstr(ipclock_lock_error(lock), "already"));
  assert_int_equal(ipclock_watch_remove(other, lock), -EINVAL);

  /* The watch renews and checks it: the owner may not acquire, refresh or
   * serialize it behind the watch's back. */
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), -EPERM);
  assert_int_equal(ipclock_lock_refresh(lock, 0), -EPERM);
  assert_non_null(strstr(ipclock_lock_error(lock), "renews"));
  char *text = NULL;
  assert_int_equal(ipclock_lock_serialize(lock, &text), -EPERM);
  assert_int_equal(ipclock_lock_previous_owner_died(lock), 0);
  assert_int_equal(ipclock_lock_is_acquired(lock), 1);

  /* Taken off, it stays held. */
  assert_int_equal(ipclock_watch_remove(watch, lock), 0);
  assert_int_equal(ipclock_watch_remove(watch, lock), -EINVAL);
  assert_int_equal(ipclock_lock_is_acquired(lock), 1);
  assert_int_equal(ipclock_lock_check(lock), 0);
  assert_int_equal(ipclock_lock_refresh(lock, 0), 0);

  /* Abandoned while watched: off the watch, forgotten, still held in the
   * store (until this process ends). */
  assert_int_equal(ipclock_watch_add(other, lock), 0);
  assert_int_equal(ipclock_lock_abandon(lock), 0);
  assert_int_equal(ipclock_lock_is_acquired(lock), 0);
  ipclock_lock *rival = capi_lock(store, "misused", NULL);
  assert_int_equal(ipclock_lock_acquire(rival, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);

  /* A watched handle destroyed before its watch. */
  ipclock_lock *gone = watched_lock(watch, store, "destroyed-first", NULL);
  ipclock_lock_destroy(gone);
  gone = held_lock(store, "destroyed-first", NULL);
  ipclock_lock_destroy(gone);

  ipclock_lock_destroy(rival);
  ipclock_lock_destroy(lock);
  ipclock_watch_destroy(watch);
  ipclock_watch_destroy(other);
  ipclock_store_close(store);
}

/* The child's side of watch_under_fork: its copy of the parent's watch
 * refuses every call and lets go of nothing of the parent's; its own watch
 * works. Returns an exit code. */
static int forked_child(ipclock_watch *inherited, ipclock_lock *pending, ipclock_lock *held,
                        const char *dsn) {
  ipclock_lock *got = (ipclock_lock *)1;
  if (ipclock_watch_fd(inherited) != -EPERM) return 10;
  if (ipclock_watch_next_lost(inherited, &got) != -EPERM || got != NULL) return 11;
  if (ipclock_watch_remove(inherited, held) != -EPERM) return 12;
  ipclock_store *store = NULL;
  ipclock_lock *own = NULL;
  if (ipclock_store_open(dsn, NULL, &store, NULL) != 0) return 13;
  if (ipclock_lock_create(store, "fork-child", 10, NULL, &own, NULL) != 0) return 14;
  if (ipclock_lock_acquire(own, IPCLOCK_NONBLOCK, 0) != 0) return 15;
  /* Its own lock may not join the parent's watch, whose descriptor the
   * child shares. */
  if (ipclock_watch_add(inherited, own) != -EPERM) return 16;
  /* Its copies go without touching the parent's lock or descriptor. */
  ipclock_lock_destroy(pending);
  ipclock_lock_destroy(held);
  ipclock_watch_destroy(inherited);

#if defined(__SANITIZE_THREAD__)
  /* GCC's ThreadSanitizer aborts ("dup thread") when a child forked from a
   * process with running threads starts threads of its own, as its own
   * watch does. Plain and ASan builds run the rest. */
  ipclock_lock_destroy(own);
  ipclock_store_close(store);
  return 0;
#endif
  struct ipclock_watch_options opts = {.check_interval_ms = 200};
  ipclock_watch *mine = NULL;
  if (ipclock_watch_create(&opts, &mine, NULL) != 0) return 17;
  if (ipclock_watch_add(mine, own) != 0) return 18;
  if (capi_unlink_lock_file("fork-child") != 0) return 19;
  if (!capi_readable(ipclock_watch_fd(mine), 10000)) return 20;
  ipclock_lock *lost = NULL;
  if (ipclock_watch_next_lost(mine, &lost) != 1 || lost != own) return 21;
  if (ipclock_lock_release(own) != IPCLOCK_LOST) return 22;
  ipclock_watch_destroy(mine);
  ipclock_lock_destroy(own);
  ipclock_store_close(store);
  return 0;
}

/* A fork()ed child does not inherit a watch that acts on its parent's
 * locks: with a loss waiting unacknowledged in the parent, the child uses,
 * then destroys, its copies of the watch and of both watched locks; the
 * parent's descriptor stays readable, its loss stays to be taken, and its
 * other lock stays held and watched, losses of it heard at once. */
static void watch_under_fork(void **state) {
  (void)state;
  struct lost_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  /* Checks only when the kernel reports something, or when asked: the
   * watch's thread is idle when the test forks. */
  ipclock_watch *watch = make_watch(600000, &log);
  int fd = ipclock_watch_fd(watch);
  char dsn[128];
  capi_flock_dsn(dsn, sizeof(dsn), "");
  ipclock_store *store = capi_open(dsn);
  ipclock_lock *pending = watched_lock(watch, store, "fork-pending", NULL);
  ipclock_lock *held = watched_lock(watch, store, "fork-held", NULL);
  assert_int_equal(capi_unlink_lock_file("fork-pending"), 0);
  capi_sleep_ms(2);
  assert_int_equal(ipclock_lock_check(pending), IPCLOCK_LOST);
  assert_true(capi_readable(fd, 0));
  assert_int_equal(lost_calls(&log), 1);

  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(forked_child(watch, pending, held, dsn));
  assert_int_equal(capi_exit_code(pid), 0);

  assert_true(capi_readable(fd, 0));
  ipclock_lock *lost = NULL;
  assert_int_equal(ipclock_watch_next_lost(watch, &lost), 1);
  assert_ptr_equal(lost, pending);
  assert_false(capi_readable(fd, 0));
  assert_int_equal(ipclock_lock_check(held), 0);
  ipclock_lock *rival = capi_lock(store, "fork-held", NULL);
  assert_int_equal(ipclock_lock_acquire(rival, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  ipclock_lock_destroy(rival);
  assert_int_equal(lost_calls(&log), 1); /* the child's loss was its own */

  /* The parent's watch still hears of its losses by itself (from inotify:
   * its interval is 10 minutes), the child's letting go of its copy of the
   * lock notwithstanding. */
  assert_int_equal(capi_unlink_lock_file("fork-held"), 0);
  assert_true(capi_readable(fd, 20000));
  assert_int_equal(lost_calls(&log), 2);
  assert_int_equal(ipclock_lock_check(held), IPCLOCK_LOST);
  assert_int_equal(ipclock_lock_release(pending), IPCLOCK_LOST);
  assert_int_equal(ipclock_lock_release(held), IPCLOCK_LOST);
  assert_false(capi_readable(fd, 0));
  ipclock_lock_destroy(pending);
  ipclock_lock_destroy(held);
  ipclock_watch_destroy(watch);
  ipclock_store_close(store);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      capi_flock_store_test(check_finds_a_deleted_lock_file),
      cmocka_unit_test(watch_finds_a_deleted_lock_file),
      cmocka_unit_test(check_of_a_watched_lock),
      capi_memory_store_test(watch_renews_leases),
      cmocka_unit_test(watch_misuse),
      cmocka_unit_test(watch_under_fork),
  };
  return cmocka_run_group_tests_name("capi_watch", tests, capi_setup, capi_teardown);
}
