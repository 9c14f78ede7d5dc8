/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A C program that opens flock stores only, with
 * ipclock_store_open_kinds(): run.sh checks that it links no other store
 * (nor the registry of every store), then runs it.
 *
 * Usage: flock_only FLOCK_DSN OTHER_DSN
 *   takes and releases a lock in FLOCK_DSN, and requires OTHER_DSN (of
 *   another kind) to be refused with -EINVAL. Exits 0 if both held.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ipclock/c.h>

static const struct ipclock_store_kind *const kinds[] = {&ipclock_kind_flock};

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: flock_only FLOCK_DSN OTHER_DSN\n");
    return 64;
  }
  ipclock_store *store = NULL;
  char *why = NULL;
  int rc = ipclock_store_open_kinds(argv[2], kinds, 1, NULL, &store, &why);
  if (rc != -EINVAL || why == NULL || strstr(why, "this program opens: flock") == NULL) {
    fprintf(stderr, "%s: got %d (%s), not -EINVAL naming flock\n", argv[2], rc,
            why != NULL ? why : "no message");
    return 1;
  }
  free(why);
  why = NULL;
  if (ipclock_store_open_kinds(argv[1], kinds, 1, NULL, &store, &why) != 0) {
    fprintf(stderr, "%s: %s\n", argv[1], why);
    free(why);
    return 1;
  }
  ipclock_lock *lock = NULL;
  rc = ipclock_lock_create(store, "flock-only", 10, NULL, &lock, NULL);
  if (rc == 0) rc = ipclock_lock_acquire(lock, 0, 0);
  if (rc == 0) rc = ipclock_lock_release(lock);
  if (rc != 0) fprintf(stderr, "%s: %s\n", argv[1], ipclock_strerror(rc));
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
  if (rc == 0) printf("flock lock taken through ipclock_store_open_kinds()\n");
  return rc != 0;
}
