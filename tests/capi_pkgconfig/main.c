/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A C11 program built against an installed ipclock through pkg-config, as a
 * user's program would be: it must compile with only the public header and
 * link with only what ipclock.pc lists.
 *
 * Usage: main DSN...   (exits 0 if every DSN works)
 */

#include <stdio.h>
#include <string.h>

#include <ipclock/c.h>

static int check(const char *dsn) {
  ipclock_store *store = NULL;
  ipclock_lock *first = NULL;
  ipclock_lock *second = NULL;
  int rc = ipclock_store_open(dsn, &store);
  if (rc < 0) {
    fprintf(stderr, "%s: open: %s\n", dsn, ipclock_last_error());
    return 1;
  }
  int failed = 1;
  if (ipclock_lock_create(store, "pkg-config", 10, NULL, &first) < 0 ||
      ipclock_lock_create(store, "pkg-config", 10, NULL, &second) < 0) {
    fprintf(stderr, "%s: create: %s\n", dsn, ipclock_store_error(store));
  } else if ((rc = ipclock_lock_acquire(first, IPCLOCK_NONBLOCK, 0)) != 0) {
    fprintf(stderr, "%s: acquire: %s\n", dsn, ipclock_strerror(rc));
  } else if ((rc = ipclock_lock_acquire(second, 0, 20)) != IPCLOCK_BUSY) {
    fprintf(stderr, "%s: second acquire gave %d, not busy\n", dsn, rc);
  } else if ((rc = ipclock_lock_release(first)) != 0) {
    fprintf(stderr, "%s: release: %s\n", dsn, ipclock_lock_error(first));
  } else if ((rc = ipclock_lock_acquire(second, 0, -1)) != 0) {
    fprintf(stderr, "%s: acquire after release: %s\n", dsn, ipclock_strerror(rc));
  } else {
    failed = 0;
  }
  ipclock_lock_destroy(first);
  ipclock_lock_destroy(second);
  ipclock_store_close(store);
  if (!failed) printf("%s: ok\n", dsn);
  return failed;
}

int main(int argc, char **argv) {
  int failures = 0;
  for (int i = 1; i < argc; ++i) failures += check(argv[i]);
  return failures == 0 && argc > 1 ? 0 : 1;
}
