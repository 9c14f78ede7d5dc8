/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The parent project's program. It sees ipclock's public headers only:
 * ipclock's sources and its generated config header are not on the include
 * path of a project that uses it.
 *
 * Usage: parent DSN   (exits 0 if a lock was taken and released)
 */

#if __has_include("ipclock_config.h")
#error "ipclock's build root is on the parent's include path"
#endif
#if __has_include("core/errors.h")
#error "ipclock's src/ is on the parent's include path"
#endif

#include <stdio.h>
#include <stdlib.h>

#include <ipclock/c.h>

int main(int argc, char **argv) {
  ipclock_store *store = NULL;
  ipclock_lock *lock = NULL;
  char *why = NULL;
  if (argc != 2) {
    fprintf(stderr, "usage: parent DSN\n");
    return 1;
  }
  if (ipclock_store_open(argv[1], NULL, &store, &why) < 0) {
    fprintf(stderr, "open: %s\n", why);
    free(why);
    return 1;
  }
  int rc = ipclock_lock_create(store, "parent", 10, NULL, &lock, NULL);
  if (rc == 0) rc = ipclock_lock_acquire(lock, IPCLOCK_NONBLOCK, 0);
  if (rc == 0) rc = ipclock_lock_release(lock);
  if (rc != 0) fprintf(stderr, "lock: %s\n", ipclock_strerror(rc));
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
  return rc == 0 ? 0 : 1;
}
