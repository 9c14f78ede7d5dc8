/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A C11 program built against an installed ipclock through pkg-config, as a
 * user's program would be: it must compile with only the public header and
 * link with only what ipclock.pc lists. It prints the version of the
 * library it linked, after checking that the installed headers' version
 * macros (ipclock/version.h) say the same; run.sh compares it with
 * `pkg-config --modversion ipclock`.
 *
 * Usage: main DSN...   (exits 0 if every DSN works)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ipclock/c.h>

static int check(const char *dsn) {
  ipclock_store *store = NULL;
  ipclock_lock *first = NULL;
  ipclock_lock *second = NULL;
  char *why = NULL;
  int rc = ipclock_store_open(dsn, NULL, &store, &why);
  if (rc < 0) {
    fprintf(stderr, "%s: open: %s\n", dsn, why);
    free(why);
    return 1;
  }
  int failed = 1;
  if (ipclock_lock_create(store, "pkg-config", 10, NULL, &first, &why) < 0 ||
      ipclock_lock_create(store, "pkg-config", 10, NULL, &second, &why) < 0) {
    fprintf(stderr, "%s: create: %s\n", dsn, why);
  } else if ((rc = ipclock_lock_acquire(first, IPCLOCK_NONBLOCK, 0)) != 0) {
    fprintf(stderr, "%s: acquire: %s\n", dsn, ipclock_strerror(rc));
  } else if ((rc = ipclock_lock_check(first)) != 0) {
    fprintf(stderr, "%s: check: %s\n", dsn, ipclock_lock_error(first));
  } else if ((rc = ipclock_lock_acquire(second, 0, 20)) != IPCLOCK_BUSY) {
    fprintf(stderr, "%s: second acquire gave %d, not busy\n", dsn, rc);
  } else if ((rc = ipclock_lock_release(first)) != 0) {
    fprintf(stderr, "%s: release: %s\n", dsn, ipclock_lock_error(first));
  } else if ((rc = ipclock_lock_acquire(second, 0, -1)) != 0) {
    fprintf(stderr, "%s: acquire after release: %s\n", dsn, ipclock_strerror(rc));
  } else {
    failed = 0;
  }
  free(why);
  ipclock_lock_destroy(first);
  ipclock_lock_destroy(second);
  ipclock_store_close(store);
  if (!failed) printf("%s: ok\n", dsn);
  return failed;
}

int main(int argc, char **argv) {
  if (ipclock_version_number() != IPCLOCK_VERSION_NUMBER ||
      strcmp(ipclock_version(), IPCLOCK_VERSION_STRING) != 0) {
    fprintf(stderr, "headers of %s (%d), library of %s (%d)\n", IPCLOCK_VERSION_STRING,
            IPCLOCK_VERSION_NUMBER, ipclock_version(), ipclock_version_number());
    return 1;
  }
  printf("version %d.%d.%d\n", IPCLOCK_VERSION_MAJOR, IPCLOCK_VERSION_MINOR,
         IPCLOCK_VERSION_PATCH);
  int failures = 0;
  for (int i = 1; i < argc; ++i) failures += check(argv[i]);
  return failures == 0 && argc > 1 ? 0 : 1;
}
