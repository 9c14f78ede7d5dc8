/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * -----------------------------------------------------------------------------
 * File: c.h
 * -----------------------------------------------------------------------------
 *
 * Part of the API for programs: the whole C API, in this header and
 * c_store_kinds.h, which it includes.
 *
 * The C API: named locks between processes for C programs (and for other
 * languages through their C FFI). It is a thin layer over the C++ library
 * and behaves the same; the C++ headers (lock.h, lock_watch.h,
 * diagnostics.h, store_factory.h) say more about each operation.
 *
 * Example:
 *
 *   int export_invoices(void) {
 *     char *why = NULL;
 *     ipclock_store *store;
 *     ipclock_lock *lock;
 *     if (ipclock_store_open("flock", NULL, &store, &why) < 0) {
 *       fprintf(stderr, "%s\n", why);
 *       free(why);
 *       return 1;
 *     }
 *     // A name is any bytes, so its length is given.
 *     const char *name = "invoice-42";
 *     int rc = ipclock_lock_create(store, name, strlen(name), NULL, &lock, &why);
 *     if (rc == 0) rc = ipclock_lock_acquire(lock, 0, 5000);  // wait up to 5 s
 *     if (rc == 0) {
 *       // ... holding the lock ...
 *       rc = ipclock_lock_release(lock);  // IPCLOCK_LOST if it was lost
 *     }
 *     if (rc == IPCLOCK_BUSY) {
 *       // ... someone else kept it for 5 s ...
 *     } else if (rc < 0) {
 *       fprintf(stderr, "%s\n", why != NULL ? why : ipclock_lock_error(lock));
 *     }
 *     free(why);
 *     ipclock_lock_destroy(lock);
 *     ipclock_store_close(store);
 *     return rc != 0;
 *   }
 *
 * Conventions (as in liburing):
 *   - Functions that can fail return 0 on success and a negative errno
 *     value on failure. IPCLOCK_BUSY (positive) is not a failure: it means
 *     the lock is held by another owner. `ipclock_strerror()` describes any
 *     of these codes.
 *   - Every function checks its pointer arguments and returns -EINVAL for a
 *     NULL one (those that return a string or bits say what instead); the
 *     destroy and close functions accept NULL and do nothing.
 *   - Nothing here throws, longjmps or aborts on bad input.
 *
 * ERRORS: one channel per handle. A failure's message (naming the store,
 * the resource and the OS error) is kept where only the caller can see it:
 *   - a lock handle keeps the message of the last failure of a call on it,
 *     `ipclock_lock_error()`. A lock handle is used by one thread at a time,
 *     so the message is that thread's;
 *   - a call that makes a handle (`ipclock_store_open()`,
 *     `ipclock_store_open_kinds()`, `ipclock_lock_create()`,
 *     `ipclock_lock_from_serialized()`, `ipclock_watch_create()`) has no
 *     handle to keep it when it fails: it gives the message through its
 *     last argument, `char **error`, as a string the caller frees with
 *     free() (NULL on success, when `error` is NULL, or when even the
 *     message could not be allocated);
 *   - store and watch handles, which threads share, keep no error state at
 *     all: their other calls either act on a lock (whose handle gets the
 *     message) or fail only in ways the code says fully (-EINVAL for a NULL
 *     argument, -EPERM in a fork()ed child). Shared error text would be
 *     whichever thread failed last; this way no thread reads another's.
 *
 * The codes returned, and what they mean here (ipclock/errors.h has the
 * classes they come from; only -EAGAIN is worth trying again):
 *   -EINVAL      a bad argument or configuration: NULL pointer, malformed
 *                DSN, unknown flag or option, a value out of range, a file
 *                of the wrong type named by the DSN, bad resource name, a
 *                shared lock or permits the store cannot give
 *   -EACCES      permission denied (a lock dir or file, a server login)
 *   -EAGAIN      the store is unavailable for now (server down, interrupted)
 *   -ENOENT      something the store needs does not exist
 *   -EEXIST      something the store wanted to create already exists
 *   -ENOSPC      a resource ran out (disk, semaphores, descriptors, memory)
 *   -ENOSYS      the DSN names a store this build does not include
 *   -EPERM       refused by policy or used wrongly (e.g. removeipc=refuse,
 *                a check of a lock that is not held, a watch used in a
 *                fork()ed child)
 *   IPCLOCK_LOST (-ECANCELED) the lock was lost while held: its lease ran
 *                out, or what held it went away (its lock file, segment,
 *                semaphore, key or database session). It may now belong to
 *                someone else
 *   -ETIMEDOUT   a store operation (not a wait for the lock) timed out
 *   -ENOMEM      a handle could not be allocated
 *   -ENODATA     `ipclock_lock_fence()` only: no fencing token
 *   -EIO         anything else
 *
 * THREADS. A store handle may be used by any number of threads at once
 * (not `ipclock_store_close()`, which must be the last call on it). A lock
 * handle must be used by one thread at a time. A watch handle may be used
 * by any number of threads at once (not `ipclock_watch_destroy()`).
 *
 * FORK. A fork()ed child's copies of its parent's held locks are its
 * parent's: the child's release or destroy lets go of the child's copy only
 * (doc/stores.md says how each store does so). A watch belongs to the
 * process that made it; see "Watching held locks" below.
 */

#ifndef IPCLOCK_C_H_
#define IPCLOCK_C_H_

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "ipclock/c_store_kinds.h"
#include "ipclock/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by `ipclock_lock_acquire()` when another owner holds the lock
 * (a try found it held, or a wait ran out). Positive, so that `rc < 0`
 * still means "failed" and `rc != 0` means "not acquired". */
#define IPCLOCK_BUSY 1

/* Returned when a lock was lost while held (see the table above): by
 * `ipclock_lock_check()`, `ipclock_lock_release()`, `ipclock_lock_refresh()`
 * and `ipclock_watch_remove()`, and by `ipclock_lock_from_serialized()` for
 * a lock released or run out since. A failure: the lock is not held. */
#define IPCLOCK_LOST (-ECANCELED)

/* Flags for `ipclock_lock_acquire()`. */
#define IPCLOCK_SHARED (1u << 0)   /* a shared (read) lock, not exclusive */
#define IPCLOCK_NONBLOCK (1u << 1) /* one attempt, wait_ms ignored */

/* Where locks live, built from a DSN. */
typedef struct ipclock_store ipclock_store;

/* One named lock on a store, held or not. */
typedef struct ipclock_lock ipclock_lock;

/* Watches held locks: renews their leases, finds them lost. */
typedef struct ipclock_watch ipclock_watch;

/* --- Version -------------------------------------------------------------- */

/* The version of the library linked in, "MAJOR.MINOR.PATCH"; compare with
 * IPCLOCK_VERSION_STRING (version.h), the version of the headers. Static;
 * never NULL. */
const char *ipclock_version(void);

/* The same as one number, MAJOR * 1000000 + MINOR * 1000 + PATCH, to
 * compare with IPCLOCK_VERSION_NUMBER. */
int ipclock_version_number(void);

/* --- Diagnostics ---------------------------------------------------------- */

/* What ipclock reports without a call to return it through (a lock dir
 * that systemd may delete, a lease that ran out while held, a lock lost
 * while held, a fallback store in use): diagnostics.h in C. */
enum ipclock_diagnostic_kind {
  /* About the process or a store rather than one lock. */
  IPCLOCK_DIAG_NOTICE = 0,
  /* A lock was released after its lease had run out. */
  IPCLOCK_DIAG_LEASE_OVERRUN = 1,
  /* A watch found a held lock lost. */
  IPCLOCK_DIAG_LOCK_LOST = 2,
  /* What happened to one lock, reported by a program of its own (the
   * ipclock CLI does); the library never emits these. */
  IPCLOCK_DIAG_WAITING = 3,    /* held by another: waiting for it */
  IPCLOCK_DIAG_ACQUIRED = 4,   /* acquired */
  IPCLOCK_DIAG_OWNER_DIED = 5, /* acquired from a holder that died holding it */
};

enum ipclock_diagnostic_severity {
  IPCLOCK_DIAG_INFO = 0,    /* nothing is wrong with any lock */
  IPCLOCK_DIAG_WARNING = 1, /* a lock is at risk, or was lost */
  IPCLOCK_DIAG_ERROR = 2,   /* something failed (programs' own reports only) */
};

/* One diagnostic. Every string is NUL-terminated, never NULL, and valid only
 * during the call that receives it. */
struct ipclock_diagnostic {
  int kind;     /* enum ipclock_diagnostic_kind */
  int severity; /* enum ipclock_diagnostic_severity */
  /* The whole diagnostic, one line without the newline, starting with
   * "ipclock: ". */
  const char *text;
  /* For the two kinds about a lock: its store (as
   * `ipclock_store_describe()` says it), its resource (`resource_len`
   * bytes, any bytes), IPCLOCK_LOST and what happened (e.g. "lock file ...
   * was deleted"). "", 0, 0 and "" for notices. */
  const char *store;
  const char *resource;
  size_t resource_len;
  int code;
  const char *message;
  /* For IPCLOCK_DIAG_LEASE_OVERRUN: the lease, and how long before the
   * release it ran out; 0 otherwise. */
  int64_t ttl_ms;
  int64_t overrun_ms;
};

/* Receives diagnostics. May be called from any thread, a watch's thread
 * included, and from several at once; `arg` is the pointer given with it. */
typedef void (*ipclock_diagnostic_fn)(const struct ipclock_diagnostic *diagnostic,
                                      void *arg);

/* Sets the process default handler: it gets every diagnostic that no watch
 * or store handler takes (diagnostics.h says the order). NULL restores the
 * first default, one line on stderr; to say nothing, set a function that
 * does nothing. Thread-safe; a diagnostic already on its way may still
 * reach the previous handler. */
void ipclock_set_diagnostic_handler(ipclock_diagnostic_fn fn, void *arg);

/* --- Stores --------------------------------------------------------------- */

/* What a local store does where systemd-logind may delete its locks
 * (remove_ipc.h). */
enum ipclock_removeipc_policy {
  IPCLOCK_REMOVEIPC_WARN = 0, /* one diagnostic per risk and process */
  IPCLOCK_REMOVEIPC_REFUSE = 1, /* the store is not opened (-EPERM) */
  IPCLOCK_REMOVEIPC_IGNORE = 2,
};

/* Options of `ipclock_store_open()`. A zeroed struct (or NULL) gives the
 * defaults. */
struct ipclock_store_options {
  /* enum ipclock_removeipc_policy; the DSN's `removeipc=` option wins. */
  int remove_ipc;
  /* Where this store's diagnostics go: what is found while it is opened and
   * what the store and its locks report afterwards (as
   * `ipclock_store_set_diagnostic_handler()`). NULL: the process default. */
  ipclock_diagnostic_fn diagnostics;
  void *diagnostics_arg;
};

/* Opens the store that `dsn` names ("flock", "flock:///run/lock/app",
 * "in-memory", ...; doc/stores.md lists every scheme and option) and sets
 * `*out` to it, or to NULL on failure. `opts` may be NULL. Returns 0, or
 * -EINVAL for a malformed DSN, -ENOSYS for a store not in this build, or
 * the store's error, whose message goes to `*error` (see ERRORS above).
 * Close the store with `ipclock_store_close()`. */
int ipclock_store_open(const char *dsn, const struct ipclock_store_options *opts,
                       ipclock_store **out, char **error);

/* `ipclock_store_open_kinds()`, for a program that knows which kinds of
 * store it may be given, and the kinds it takes: c_store_kinds.h. */

/* Closes a store handle. Locks created from it stay usable: the store lives
 * until its last lock is destroyed. NULL does nothing. */
void ipclock_store_close(ipclock_store *store);

/* The store's kind, as in its DSN scheme ("flock", "redis", ...), and this
 * instance for messages ("flock:///run/lock/app"; never a password). Valid
 * while the handle is open; never NULL ("" for a NULL store). */
const char *ipclock_store_name(const ipclock_store *store);
const char *ipclock_store_describe(const ipclock_store *store);

/* What a store can do (store.h, `Capabilities`): a request a store cannot
 * honour is refused, never approximated. */
#define IPCLOCK_CAP_BLOCKING (1u << 0)     /* waits sleep until a release */
#define IPCLOCK_CAP_EXPIRING (1u << 1)     /* locks carry a lease (TTL) */
#define IPCLOCK_CAP_SHARED (1u << 2)       /* shared (read) locks */
#define IPCLOCK_CAP_SERIALIZABLE (1u << 3) /* ipclock_lock_serialize() */
#define IPCLOCK_CAP_FENCING (1u << 4)      /* ipclock_lock_fence() */
#define IPCLOCK_CAP_OWNER_DEATH (1u << 5)  /* ipclock_lock_previous_owner_died() */
#define IPCLOCK_CAP_COUNTING (1u << 6)     /* permits > 1 */
#define IPCLOCK_CAP_WEIGHTED (1u << 7)     /* weight > 1 (semaphores) */

/* The IPCLOCK_CAP_* bits of the store; 0 for NULL. Fixed for its life. */
unsigned ipclock_store_capabilities(const ipclock_store *store);

/* Whom a store's locks exclude. */
enum ipclock_scope {
  IPCLOCK_SCOPE_PROCESS = 0, /* threads of this process only (in-memory) */
  IPCLOCK_SCOPE_LOCAL = 1,   /* processes on this host */
  IPCLOCK_SCOPE_REMOTE = 2,  /* processes on every host using the server */
};

/* The store's enum ipclock_scope, or -EINVAL for NULL. */
int ipclock_store_scope(const ipclock_store *store);

/* Sets (or, with NULL, clears) the handler of this store's diagnostics:
 * lease overruns of its locks, losses found by a watch without a callback,
 * acquisitions on a fallback store. A cleared one leaves them to the
 * process default. Returns 0 or -EINVAL. Thread-safe. */
int ipclock_store_set_diagnostic_handler(ipclock_store *store, ipclock_diagnostic_fn fn,
                                         void *arg);

/* --- Locks ---------------------------------------------------------------- */

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
  /* The longest resource name accepted, in bytes; 0 means 1024. Raise it
   * only where every store in use takes longer names. */
  size_t max_resource_bytes;
  /* Permits taken of `permits`, all or none; 0 means 1 (above 1: stores
   * with IPCLOCK_CAP_WEIGHTED, as ipclock_store_open_semaphores() opens). */
  uint32_t weight;
};

/* Opens in `*out` the store for counting semaphores over `store` (see
 * doc/c-api.md): a lock made there with `permits` N and `weight` W holds W
 * of the N permits. Returns 0, -EINVAL, -ENOMEM, the message in `*error`.
 *
 * Example (at most 3 downloads at once, this one taking 1):
 *
 *   int take_permit(ipclock_store *sems, ipclock_lock **permit, char **error) {
 *     struct ipclock_lock_options opts = {.permits = 3, .weight = 1};
 *     int rc = ipclock_lock_create(sems, "firmware", 8, &opts, permit, error);
 *     return rc != 0 ? rc : ipclock_lock_acquire(*permit, 0, 30000);
 *   }
 */
int ipclock_store_open_semaphores(ipclock_store *store, ipclock_store **out, char **error);

/* Makes a lock on `resource` (`resource_len` bytes, any bytes allowed,
 * 1 to `max_resource_bytes` of them) in `store`, not yet acquired, and sets
 * `*out` to it (or to NULL on failure). `opts` may be NULL for the
 * defaults. Returns 0, -EINVAL for a bad name or options the store cannot
 * honour (permits > 1 on a store without counting semaphores), -ENOMEM;
 * the message goes to `*error`. */
int ipclock_lock_create(ipclock_store *store, const char *resource,
                        size_t resource_len,
                        const struct ipclock_lock_options *opts,
                        ipclock_lock **out, char **error);

/* Takes over a lock that another process acquired and handed over as the
 * text of `ipclock_lock_serialize()`, on a store with
 * IPCLOCK_CAP_SERIALIZABLE. The store is asked: the new handle holds the
 * lock only if it is held with that owner now. Returns 0; IPCLOCK_LOST if
 * it was released or its lease ran out meanwhile; -EINVAL for text that
 * `ipclock_lock_serialize()` did not make or that was altered; -EPERM on a
 * store whose locks cannot be handed over. The message goes to `*error`. */
int ipclock_lock_from_serialized(ipclock_store *store, const char *text,
                                 const struct ipclock_lock_options *opts,
                                 ipclock_lock **out, char **error);

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
 * `ipclock_lock_is_acquired()`. -EPERM for a lock on a watch (release it,
 * or take it off the watch, first). */
int ipclock_lock_acquire(ipclock_lock *lock, unsigned flags, int64_t wait_ms);

/* Extends the lease of a held lock to `ttl_ms` from now, or to the lock's
 * TTL if `ttl_ms` is 0. Does nothing on stores without leases. Returns 0,
 * -EINVAL for a negative `ttl_ms`, IPCLOCK_LOST if the lease had already
 * run out (the lock may have been taken by someone else in between), -EPERM
 * for a lock on a watch (the watch renews its lease). */
int ipclock_lock_refresh(ipclock_lock *lock, int64_t ttl_ms);

/* Asks the store whether the lock is still held, and still the lock this
 * handle acquired: its lock file, segment, semaphore, key or session not
 * deleted or replaced, its lease not run out. Returns
 *   0             held;
 *   IPCLOCK_LOST  lost: another holder may have it now. The message says
 *                 what happened. The handle then counts as released, and
 *                 what the store still had of it is let go (a lock on a
 *                 watch stays on it, lost, until it is released);
 *   -EPERM        the lock is not held (never acquired, released, or found
 *                 lost before);
 *   -EAGAIN or another error: the store cannot tell now; the lock may
 *                 still be held.
 * It costs one check on the store: an fstat and a stat for a lock file, a
 * system call for a semaphore, a round trip for a server. On a lock on a
 * watch it checks at once, as the watch would, and a loss found here is
 * told as the watch tells one (its callback runs in this thread). */
int ipclock_lock_check(ipclock_lock *lock);

/* Releases the lock. Returns 0, also when it was not held; IPCLOCK_LOST if
 * the lock was lost while held (its lease ran out, or its lock file,
 * segment, semaphore, key or database session went away, or its watch
 * found it lost): whatever it protected may have been touched by another
 * holder meanwhile. The lock is released in every case, and taken off its
 * watch if it was on one. */
int ipclock_lock_release(ipclock_lock *lock);

/* Destroys a lock handle, releasing the lock first if it is held (unless it
 * was created with `keep_on_destroy`) and taking it off its watch. Errors
 * of that release are dropped: call `ipclock_lock_release()` first to see
 * them. NULL does nothing. */
void ipclock_lock_destroy(ipclock_lock *lock);

/* Forgets a held lock without releasing it, e.g. after
 * `ipclock_lock_serialize()` handed it to another process (and takes it
 * off its watch). The store keeps it until it is released there or its
 * lease runs out. Returns 0 or -EINVAL. */
int ipclock_lock_abandon(ipclock_lock *lock);

/* A self-checking text form of the held lock (resource, owner, remaining
 * lease, fence) that `ipclock_lock_from_serialized()` takes over in another
 * process. Sets `*text` to it, NUL-terminated, for the caller to free()
 * (NULL on failure). Returns 0; -EPERM unless the lock is held on a store
 * with IPCLOCK_CAP_SERIALIZABLE and is not on a watch; -ENOMEM. Then
 * abandon or destroy this handle without releasing (`keep_on_destroy`). */
int ipclock_lock_serialize(ipclock_lock *lock, char **text);

/* The resource, and its length in `*len` if `len` is not NULL. Valid until
 * the handle is destroyed; NUL-terminated (a resource may also hold NULs:
 * use `*len`). May be called from any thread. NULL for a NULL lock. */
const char *ipclock_lock_resource(const ipclock_lock *lock, size_t *len);

/* 1 if this handle believes it holds the lock (it acquired and has not
 * released, and no check or watch found it lost), 0 if not, -EINVAL for
 * NULL. Costs no store call (on a watched lock, it may wait for a check of
 * the watch under way). */
int ipclock_lock_is_acquired(const ipclock_lock *lock);

/* 1 if the lock's lease has run out, 0 if not (or it has none), -EINVAL. */
int ipclock_lock_is_expired(const ipclock_lock *lock);

/* Milliseconds left on the lease (0 once it ran out), -1 if the lock has no
 * lease, -EINVAL for NULL. A watch's renewals show here. */
int64_t ipclock_lock_remaining_ms(const ipclock_lock *lock);

/* Sets `*out` to the fencing token of the current acquisition: a number
 * that grows with every exclusive acquisition of the resource, to hand to
 * whatever the lock protects so that it can refuse a stale holder. Returns
 * 0, -ENODATA if there is none (the store has no fencing, or the lock is not
 * held exclusively, or it was found lost), -EINVAL. */
int ipclock_lock_fence(const ipclock_lock *lock, uint64_t *out);

/* 1 if the previous holder died holding the lock (crashed, was killed, let
 * its lease run out), so that what it protected may be half-updated; 0 if
 * not or if the store cannot tell; -EINVAL for NULL. Set by each
 * acquisition. */
int ipclock_lock_previous_owner_died(const ipclock_lock *lock);

/* A slot semaphore's slots held, ascending: the first `cap` in `slots`; the
 * result is how many (0 without slots or nothing held), or -EINVAL. */
int ipclock_lock_slots(const ipclock_lock *lock, uint32_t *slots, size_t cap);

/* The message of the last failure of a call on `lock` ("" if none). Valid
 * until the next call on `lock` or its destruction. Never NULL. */
const char *ipclock_lock_error(const ipclock_lock *lock);

/* --- Watching held locks -------------------------------------------------- */

/* A held lock can be lost while its holder works: a tmp cleaner deletes its
 * lock file, systemd-logind's RemoveIPC removes its segment or semaphore,
 * its Redis key is flushed, its database session ends, its lease runs out.
 * A watch (lock_watch.h's LockWatch, one thread per watch) checks the locks
 * put on it every `check_interval_ms` and at once when the kernel or the
 * server reports something, renews their leases at a third of their
 * length, and tells the program of a loss in two ways, either or both:
 *
 *   - its file descriptor (`ipclock_watch_fd()`, an eventfd) is readable
 *     while a loss has not been acknowledged: level-triggered, for
 *     poll/epoll/sd-event loops. `ipclock_watch_next_lost()` gives each lost
 *     lock once and acknowledges it; releasing, destroying or taking off a
 *     lost lock acknowledges it too;
 *   - its callback, `on_lost`, runs once per lost lock, before the
 *     descriptor turns readable for it.
 *
 * A loss is also told as every diagnostic is (diagnostics.h): to `on_lost`
 * if set, else to the lock's store's handler, else to the process default
 * (stderr, unless the program set another).
 *
 * The watch never releases a lock: a lost lock stays the owner's to
 * release, since only the owner knows when it has stopped using what the
 * lock protected. Its release then returns IPCLOCK_LOST.
 *
 * Example (a loop that stops a job when its lock is lost):
 *
 *   int watch_job(ipclock_lock *held, int epoll_fd) {
 *     ipclock_watch *watch;
 *     char *why = NULL;
 *     if (ipclock_watch_create(NULL, &watch, &why) < 0) {
 *       fprintf(stderr, "%s\n", why);
 *       free(why);
 *       return -1;
 *     }
 *     if (ipclock_watch_add(watch, held) < 0) {
 *       fprintf(stderr, "%s\n", ipclock_lock_error(held));
 *       ipclock_watch_destroy(watch);
 *       return -1;
 *     }
 *     struct epoll_event ev = {.events = EPOLLIN};
 *     epoll_ctl(epoll_fd, EPOLL_CTL_ADD, ipclock_watch_fd(watch), &ev);
 *     // ... when the loop finds the descriptor readable:
 *     ipclock_lock *lost;
 *     while (ipclock_watch_next_lost(watch, &lost) == 1) {
 *       fprintf(stderr, "lost %s\n", ipclock_lock_resource(lost, NULL));
 *       // ... stop what the lock protected, then:
 *       ipclock_lock_release(lost);  // IPCLOCK_LOST
 *     }
 *     ipclock_watch_destroy(watch);
 *     return 0;
 *   }
 *
 * THE CALLBACK runs on the watch's thread (which has every signal blocked),
 * or on the thread whose `ipclock_lock_check()` found the loss, while other
 * threads may be using the lock. So it must not call anything on the lock
 * except `ipclock_lock_resource()`, and must not destroy the watch: it
 * should note the loss (set a flag, write to a pipe) and return. It delays
 * the checks of the watch's other locks while it runs. It never runs once
 * the lock has been released, taken off or destroyed (those calls wait for
 * a callback under way), so what it uses may be freed after them.
 *
 * FORK. A watch belongs to the process that made it: a fork()ed child has
 * no thread of it, and the child's calls on its copy fail with -EPERM
 * (`ipclock_watch_destroy()` lets go of the copy without touching the
 * parent's). The child's copies of watched locks are neither checked nor
 * renewed, never make the parent's descriptor readable and never run the
 * callback; destroying them lets go of the child's copies. A child makes
 * its own watch for locks of its own. The descriptor is close-on-exec. */

/* Called once per lock the watch finds lost, with the lock's handle, the
 * loss (kind IPCLOCK_DIAG_LOCK_LOST, code IPCLOCK_LOST) and `on_lost_arg`. */
typedef void (*ipclock_lost_fn)(ipclock_lock *lock,
                                const struct ipclock_diagnostic *diagnostic, void *arg);

/* Options of a watch. A zeroed struct (or NULL) gives the defaults. */
struct ipclock_watch_options {
  /* How often each lock's store is asked when nothing is reported sooner,
   * in ms; 0 means 1000. */
  int64_t check_interval_ms;
  /* See THE CALLBACK above. NULL: losses go to the store's handler, else
   * the process default (the descriptor is readable either way). */
  ipclock_lost_fn on_lost;
  void *on_lost_arg;
};

/* Makes a watch and sets `*out` to it (NULL on failure). `opts` may be
 * NULL. Returns 0; -EINVAL for a negative `check_interval_ms` or one above a
 * year (31622400000); -ENOSPC or
 * another OS error if its descriptor could not be made (the message goes to
 * `*error`). Its thread starts with its first lock. */
int ipclock_watch_create(const struct ipclock_watch_options *opts, ipclock_watch **out,
                         char **error);

/* Takes every lock off the watch, as `ipclock_watch_remove()` does (they
 * stay held, unless found lost), stops its thread and closes its
 * descriptor. It must not run
 * while another thread uses one of the watch's locks, nor from the
 * callback. NULL does nothing. */
void ipclock_watch_destroy(ipclock_watch *watch);

/* The watch's descriptor: readable while a lost lock has not been
 * acknowledged (see above). The same for the watch's life; do not read or
 * close it. -EINVAL for NULL, -EPERM in a fork()ed child. */
int ipclock_watch_fd(const ipclock_watch *watch);

/* Puts a held lock on the watch: from now on the watch checks it and renews
 * its lease, until it is released, destroyed, abandoned or taken off.
 * Returns 0; -EPERM if the lock is not held, is already on a watch, or in a
 * fork()ed child; an OS error (-ENOSPC, -EAGAIN) if the watch's thread or
 * descriptors could not be made, in which case the lock is still held,
 * unwatched. The message goes to the lock (`ipclock_lock_error()`). */
int ipclock_watch_add(ipclock_watch *watch, ipclock_lock *lock);

/* Takes `lock` off `watch`: it stays held and is no longer checked or
 * renewed. Returns 0; IPCLOCK_LOST if the watch had found it lost, in which
 * case the loss is acknowledged and the lock let go (as
 * `ipclock_lock_check()` lets go of a loss it finds: it then counts as
 * released); -EINVAL if the lock is not on this watch; -EPERM in a
 * fork()ed child. */
int ipclock_watch_remove(ipclock_watch *watch, ipclock_lock *lock);

/* Gives the next lock the watch found lost that has not been acknowledged,
 * oldest first, and acknowledges it: sets `*lock` and returns 1, or sets
 * `*lock` to NULL and returns 0 if there is none (the descriptor is then
 * not readable). The lock stays on the watch, lost, until it is released.
 * -EINVAL for NULL arguments, -EPERM in a fork()ed child. */
int ipclock_watch_next_lost(ipclock_watch *watch, ipclock_lock **lock);

/* --- Errors --------------------------------------------------------------- */

/* A short, static description of a code returned by this API: 0,
 * IPCLOCK_BUSY or a negative errno value. Never NULL; thread-safe. */
const char *ipclock_strerror(int code);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IPCLOCK_C_H_ */
