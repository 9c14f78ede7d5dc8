/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0 */

#include "capi_util.h"

#include <glob.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

char capi_dir[64];

int capi_setup(void **state) {
  (void)state;
  strcpy(capi_dir, "/tmp/ipclock-capi-XXXXXX");
  return mkdtemp(capi_dir) == NULL ? -1 : 0;
}

int capi_teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", capi_dir);
  return system(cmd) == 0 ? 0 : -1;
}

void capi_flock_dsn(char *buf, size_t size, const char *query) {
  snprintf(buf, size, "flock://%s%s", capi_dir, query);
}

ipclock_store *capi_open(const char *dsn) {
  ipclock_store *store = NULL;
  char *why = NULL;
  int rc = ipclock_store_open(dsn, NULL, &store, &why);
  if (rc != 0) fail_msg("open %s: %d %s", dsn, rc, why);
  assert_null(why);
  assert_non_null(store);
  return store;
}

ipclock_store *capi_open_flock(void) {
  char dsn[128];
  capi_flock_dsn(dsn, sizeof(dsn), "");
  return capi_open(dsn);
}

int capi_setup_memory_store(void **state) {
  *state = capi_open("in-memory");
  return 0;
}

int capi_setup_flock_store(void **state) {
  *state = capi_open_flock();
  return 0;
}

int capi_teardown_store(void **state) {
  ipclock_store_close(*state);
  return 0;
}

ipclock_lock *capi_lock(ipclock_store *store, const char *name,
                        const struct ipclock_lock_options *opts) {
  ipclock_lock *lock = NULL;
  char *why = NULL;
  int rc = ipclock_lock_create(store, name, strlen(name), opts, &lock, &why);
  if (rc != 0) fail_msg("create %s: %d %s", name, rc, why);
  assert_non_null(lock);
  return lock;
}

int capi_unlink_lock_file(const char *resource) {
  char pattern[256];
  snprintf(pattern, sizeof(pattern), "%s/sf.%s.*.lock", capi_dir, resource);
  glob_t found;
  if (glob(pattern, 0, NULL, &found) != 0) return -1;
  int rc = found.gl_pathc == 1 ? unlink(found.gl_pathv[0]) : -1;
  globfree(&found);
  return rc;
}

int capi_readable(int fd, int timeout_ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN) != 0;
}

ipclock_lock *capi_child_lock(const char *dsn, const char *name) {
  ipclock_store *s = NULL;
  ipclock_lock *l = NULL;
  if (ipclock_store_open(dsn, NULL, &s, NULL) != 0) _exit(10);
  if (ipclock_lock_create(s, name, strlen(name), NULL, &l, NULL) != 0) _exit(11);
  return l;
}

int capi_exit_code(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

double capi_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void capi_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}
