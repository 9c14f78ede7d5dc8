/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * -----------------------------------------------------------------------------
 * File: c_store_kinds.h
 * -----------------------------------------------------------------------------
 *
 * Part of the API for programs: the store kinds of the C API and
 * `ipclock_store_open_kinds()`, which opens a store of one of them. c.h
 * includes this header; programs include c.h.
 */

#ifndef IPCLOCK_C_STORE_KINDS_H_
#define IPCLOCK_C_STORE_KINDS_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declared in c.h. */
struct ipclock_store;
struct ipclock_store_options;

/* A store kind, for `ipclock_store_open_kinds()`. */
struct ipclock_store_kind;

/* Every kind but "combined" (whose members may be of any kind). A kind
 * whose store this build left out is defined all the same: opening it
 * fails with -ENOSYS, as with ipclock_store_open(). */
extern const struct ipclock_store_kind ipclock_kind_flock;
extern const struct ipclock_store_kind ipclock_kind_shm;
extern const struct ipclock_store_kind ipclock_kind_semaphore;
extern const struct ipclock_store_kind ipclock_kind_posix_semaphore;
extern const struct ipclock_store_kind ipclock_kind_in_memory;
extern const struct ipclock_store_kind ipclock_kind_redis;
extern const struct ipclock_store_kind ipclock_kind_postgres_advisory;
extern const struct ipclock_store_kind ipclock_kind_mysql_advisory;
extern const struct ipclock_store_kind ipclock_kind_postgres_table;
extern const struct ipclock_store_kind ipclock_kind_mysql_table;
extern const struct ipclock_store_kind ipclock_kind_sqlite_table;
extern const struct ipclock_store_kind ipclock_kind_memcached;
extern const struct ipclock_store_kind ipclock_kind_zookeeper;
extern const struct ipclock_store_kind ipclock_kind_etcd;

/* `ipclock_store_open()` for a program that knows which kinds of store it
 * may be given: `dsn` must name one of the `nkinds` kinds in `kinds`.
 * `ipclock_store_open()` can open any store of the build, so a program
 * that calls it links them all; a program that opens its stores only with
 * this function links the kinds it names and no other (doc/install.md,
 * "Footprint", says what that saves).
 *
 * Returns what `ipclock_store_open()` would, and -EINVAL for a DSN of
 * another kind ("unknown store 'shm' (this program opens: flock)"), for a
 * NULL entry in `kinds`, and for degraded mode (`fallback=`), which may
 * build a store of any kind.
 *
 * Example:
 *
 *   int open_lock_store(const char *dsn, ipclock_store **store) {
 *     static const struct ipclock_store_kind *const kinds[] = {&ipclock_kind_flock};
 *     char *why = NULL;
 *     int rc = ipclock_store_open_kinds(dsn, kinds, 1, NULL, store, &why);
 *     if (rc < 0) fprintf(stderr, "%s\n", why);
 *     free(why);
 *     return rc;
 *   }
 */
int ipclock_store_open_kinds(const char *dsn, const struct ipclock_store_kind *const *kinds,
                             size_t nkinds, const struct ipclock_store_options *opts,
                             struct ipclock_store **out, char **error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IPCLOCK_C_STORE_KINDS_H_ */
