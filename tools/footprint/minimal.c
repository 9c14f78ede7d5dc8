/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The smallest C program on the local stores, for the footprint figures
 * (tools/footprint.sh) and the start-up rows of tools/bench: it takes and
 * releases one lock in a flock store and, given SHMNAME, one in a shm store,
 * through the C API. It opens them with ipclock_store_open_kinds(), so that
 * those two stores are all it links. tools/footprint.sh links it fully
 * static against an installed ipclock with what `pkg-config --static --libs ipclock` says;
 * minimal_raw.c is the same program without ipclock.
 *
 * Usage: minimal LOCKDIR [SHMNAME]   (exits 0 if the locks were taken)
 */

#include <stdio.h>
#include <stdlib.h>

#include <ipclock/c.h>

static const struct ipclock_store_kind *const kinds[] = {&ipclock_kind_flock, &ipclock_kind_shm};

static int lock_once(const char *dsn) {
  ipclock_store *store = NULL;
  ipclock_lock *lock = NULL;
  char *why = NULL;
  if (ipclock_store_open_kinds(dsn, kinds, 2, NULL, &store, &why) < 0) {
    fprintf(stderr, "%s: %s\n", dsn, why);
    free(why);
    return 1;
  }
  static const char name[] = "footprint";  /* its length without the NUL */
  int rc = ipclock_lock_create(store, name, sizeof name - 1, NULL, &lock, NULL);
  if (rc == 0) rc = ipclock_lock_acquire(lock, 0, 1000);
  if (rc == 0) rc = ipclock_lock_release(lock);
  if (rc != 0) fprintf(stderr, "%s: %s\n", dsn, ipclock_strerror(rc));
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
  return rc != 0;
}

int main(int argc, char **argv) {
  char dsn[512];
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: minimal LOCKDIR [SHMNAME]\n");
    return 64;
  }
  snprintf(dsn, sizeof dsn, "flock://%s", argv[1]);
  int failed = lock_once(dsn);
  if (argc == 3) {
    snprintf(dsn, sizeof dsn, "shm://%s", argv[2]);
    failed |= lock_once(dsn);
  }
  return failed;
}
