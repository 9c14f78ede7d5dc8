/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * -----------------------------------------------------------------------------
 * File: c.h
 * -----------------------------------------------------------------------------
 *
 * Part of the API for programs: the whole C API, in this one header.
 *
 * The C API: named locks between processes for C programs (and for other
 * languages through their C FFI). It is a thin layer over the C++ library
 * and behaves the same; the C++ headers (lock.h, store_factory.h) say more
 * about each operation.
 *
 * Example:
 *
 *   ipclock_store *store;
 *   ipclock_lock *lock;
 *   int rc = ipclock_store_open("flock", &store);
 *   if (rc < 0) {
 *     fprintf(stderr, "%s\n", ipclock_last_error());
 *     return 1;
 *   }
 *   rc = ipclock_lock_create(store, "invoice-42", 10, NULL, &lock);
 *   if (rc == 0) rc = ipclock_lock_acquire(lock, 0, 5000);  // wait up to 5 s
 *   if (rc == 0) {
 *     // ... holding the lock ...
 *     ipclock_lock_release(lock);
 *   } else if (rc == IPCLOCK_BUSY) {
 *     // ... someone else kept it for 5 s ...
 *   } else {
 *     fprintf(stderr, "%s\n", ipclock_lock_error(lock));
 *   }
 *   ipclock_lock_destroy(lock);
 *   ipclock_store_close(store);
 *
 * Conventions (as in liburing):
 *   - Functions that can fail return 0 on success and a negative errno
 *     value on failure. IPCLOCK_BUSY (positive) is not a failure: it means
 *     the lock is held by another owner. `ipclock_strerror()` describes any
 *     of these codes; the handle's error function gives the full message
 *     (naming the store, the resource and the OS error).
 *   - Every function checks its pointer arguments and returns -EINVAL for a
 *     NULL one; the destroy functions accept NULL and do nothing.
 *   - Nothing here throws, longjmps or aborts on bad input.
 *
 * The codes returned, and what they mean here:
 *   -EINVAL     a bad argument: NULL pointer, malformed DSN, bad resource
 *               name, unknown flag or option
 *   -EACCES     permission denied (a lock dir or file, a server login)
 *   -EAGAIN     the store is unavailable for now (server down, interrupted)
 *   -ENOENT     something the store needs does not exist
 *   -EEXIST     something the store wanted to create already exists
 *   -ENOSPC     a resource ran out (disk, semaphores, descriptors, memory)
 *   -ENOSYS     the DSN names a store this build does not include
 *   -EPERM      refused by policy or used wrongly (e.g. a shared lock on a
 *               store without shared locks, removeipc=refuse)
 *   -ECANCELED  the lock was lost (its lease ran out, or what held it went
 *               away): it may now belong to someone else
 *   -ETIMEDOUT  a store operation (not a wait for the lock) timed out
 *   -ENOMEM     a handle could not be allocated
 *   -ENODATA    `ipclock_lock_fence()` only: no fencing token
 *   -EIO        anything else
 *
 * Threads: a store handle may be shared by threads that each create their
 * own locks; every function that takes a store handle may be called on it
 * from several threads at once (not `ipclock_store_close()`, which must be
 * the last call on it). A lock handle must be used by one thread at a time.
 * `ipclock_store_error()` says the last failure on the store by any thread;
 * a thread that wants its own failure reads `ipclock_last_error()`, which
 * is per thread.
 */

#ifndef IPCLOCK_C_H_
#define IPCLOCK_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by `ipclock_lock_acquire()` when another owner holds the lock
 * (a try found it held, or a wait ran out). Positive, so that `rc < 0`
 * still means "failed" and `rc != 0` means "not acquired". */
#define IPCLOCK_BUSY 1

/* Flags for `ipclock_lock_acquire()`. */
#define IPCLOCK_SHARED (1u << 0)   /* a shared (read) lock, not exclusive */
#define IPCLOCK_NONBLOCK (1u << 1) /* one attempt, wait_ms ignored */

/* Where locks live, built from a DSN. */
typedef struct ipclock_store ipclock_store;

/* One named lock on a store, held or not. */
typedef struct ipclock_lock ipclock_lock;

/* Options of a lock. A zeroed struct gives the defaults, so designated
 * initializers name only what differs: `{.ttl_ms = 5000}`. */
struct ipclock_lock_options {
  /* Lease length in ms on stores whose locks expire (ignored elsewhere).
   * 0 means the default, 300000 (300 s); a negative value asks for no
   * lease, which expiring stores may refuse. */
  int64_t ttl_ms;
  /* Holders allowed at once on counting stores. 0 means 1. */
  uint32_t permits;
  /* Nonzero keeps a held lock when the handle is destroyed (to hand it on,
   * or to keep it until the process exits). By default destroying the
   * handle releases the lock. */
  int keep_on_destroy;
};

/* --- Stores --------------------------------------------------------------- */

/* Opens the store that `dsn` names ("flock", "flock:///run/lock/app",
 * "in-memory", ...; doc/stores.md lists every scheme and option) and sets `*out`
 * to it, or to NULL on failure. Returns 0, or -EINVAL for a malformed DSN,
 * -ENOSYS for a store not in this build, or the store's error. The message
 * is in `ipclock_last_error()`. Close the store with `ipclock_store_close()`. */
int ipclock_store_open(const char *dsn, ipclock_store **out);

/* Closes a store handle. Locks created from it stay usable: the store lives
 * until its last lock is destroyed. NULL does nothing. */
void ipclock_store_close(ipclock_store *store);

/* The message of the last failure of a call on `store`, by any thread (""
 * if none). A copy, owned by the calling thread: valid until this thread
 * calls `ipclock_store_error()` again, whatever other threads do with the
 * store meanwhile. Never NULL. */
const char *ipclock_store_error(const ipclock_store *store);

/* --- Locks ---------------------------------------------------------------- */

/* Makes a lock on `resource` (`resource_len` bytes, any bytes allowed,
 * 1 to 1024 of them) in `store`, not yet acquired, and sets `*out` to it (or
 * to NULL on failure). `opts` may be NULL for the defaults. Returns 0,
 * -EINVAL for a bad name or options the store cannot honour (permits > 1 on
 * a store without counting semaphores), -ENOMEM. The message goes to
 * `ipclock_store_error(store)`. */
int ipclock_lock_create(ipclock_store *store, const char *resource,
                        size_t resource_len,
                        const struct ipclock_lock_options *opts,
                        ipclock_lock **out);

/* Acquires the lock: shared if `flags` has IPCLOCK_SHARED, else exclusive.
 * With IPCLOCK_NONBLOCK it tries once; otherwise it waits up to `wait_ms`
 * milliseconds (0 tries once, a negative value waits for as long as it
 * takes). Waits sleep until the holder releases; they do not poll where the
 * store can wake them. Returns 0 when the lock is held, IPCLOCK_BUSY when
 * another owner kept it (and only then), or a negative error (the lock is
 * then not held; store errors never count as acquired; a remote store that
 * did not answer in time gives -EAGAIN). Acquiring a lock already held in
 * the same mode returns 0; in the other mode it converts the lock, and a
 * conversion that gives IPCLOCK_BUSY may have cost the lock held before
 * (flock drops a shared lock before it queues for the exclusive one): see
 * `ipclock_lock_is_acquired()`. */
int ipclock_lock_acquire(ipclock_lock *lock, unsigned flags, int64_t wait_ms);

/* Extends the lease of a held lock to `ttl_ms` from now, or to the lock's
 * TTL if `ttl_ms` is 0. Does nothing on stores without leases. Returns 0,
 * -EINVAL for a negative `ttl_ms`, -ECANCELED if the lease had already run
 * out (the lock may have been taken by someone else in between). */
int ipclock_lock_refresh(ipclock_lock *lock, int64_t ttl_ms);

/* Releases the lock. Returns 0, also when it was not held; -ECANCELED if
 * the lock was lost while held (its lease ran out, or its lock file,
 * segment, semaphore, key or database session went away): whatever it
 * protected may have been touched by another holder meanwhile. The lock is
 * released in every case. */
int ipclock_lock_release(ipclock_lock *lock);

/* Destroys a lock handle, releasing the lock first if it is held (unless it
 * was created with `keep_on_destroy`). Errors of that release are dropped:
 * call `ipclock_lock_release()` first to see them. NULL does nothing. */
void ipclock_lock_destroy(ipclock_lock *lock);

/* 1 if this handle believes it holds the lock (it acquired and has not
 * released), 0 if not, -EINVAL for NULL. Costs no store call. */
int ipclock_lock_is_acquired(const ipclock_lock *lock);

/* 1 if the lock's lease has run out, 0 if not (or it has none), -EINVAL. */
int ipclock_lock_is_expired(const ipclock_lock *lock);

/* Milliseconds left on the lease (0 once it ran out), -1 if the lock has no
 * lease, -EINVAL for NULL. */
int64_t ipclock_lock_remaining_ms(const ipclock_lock *lock);

/* Sets `*out` to the fencing token of the current acquisition: a number
 * that grows with every exclusive acquisition of the resource, to hand to
 * whatever the lock protects so that it can refuse a stale holder. Returns
 * 0, -ENODATA if there is none (the store has no fencing, or the lock is not
 * held exclusively), -EINVAL. */
int ipclock_lock_fence(const ipclock_lock *lock, uint64_t *out);

/* 1 if the previous holder died holding the lock (crashed, was killed, let
 * its lease run out), so that what it protected may be half-updated; 0 if
 * not or if the store cannot tell; -EINVAL for NULL. Set by each
 * acquisition. */
int ipclock_lock_previous_owner_died(const ipclock_lock *lock);

/* The message of the last failure of a call on `lock` ("" if none). Valid
 * until the next call on `lock` or its destruction. Never NULL. */
const char *ipclock_lock_error(const ipclock_lock *lock);

/* --- Errors --------------------------------------------------------------- */

/* A short, static description of a code returned by this API: 0,
 * IPCLOCK_BUSY or a negative errno value. Never NULL; thread-safe. */
const char *ipclock_strerror(int code);

/* The message of the last failure of any call on this thread ("" if none),
 * including failures that have no handle to keep it (`ipclock_store_open`).
 * Valid until the next failing call on this thread. Never NULL. */
const char *ipclock_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IPCLOCK_C_H_ */
