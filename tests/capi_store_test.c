/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The C API's stores, from C11: bad DSNs, what a store says of itself
 * (name, description, capabilities, scope), diagnostic handlers (per store,
 * at open, the process default, back to stderr), locks handed to another
 * handle as text, the version, and the server stores through their DSNs.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capi_util.h"
#include "ipclock/c.h"
#include "ipclock_config.h"

/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* An open of `dsn` that returned `rc` and left `store` and `why` must have
 * failed with `code` and a message holding `words`. Frees `why`. */
static void failed_with(const char *dsn, int rc, ipclock_store *store, char *why, int code,
                        const char *words) {
  assert_int_equal(rc, code);
  assert_null(store);
  /* fail_msg() is not known to end the test: the compiler must see that
   * `why` is not NULL where it is printed (-Werror=format-overflow at -O3). */
  if (why == NULL) {
    fail_msg("%s: no message", dsn);
  } else if (strstr(why, words) == NULL) {
    fail_msg("%s: '%s' does not say '%s'", dsn, why, words);
  }
  free(why);
}

/* Opens `dsn`, which must fail with `code` and a message holding `words`. */
static void open_fails(const char *dsn, const struct ipclock_store_options *opts, int code,
                       const char *words) {
  ipclock_store *store = (ipclock_store *)1;
  char *why = NULL;
  const int rc = ipclock_store_open(dsn, opts, &store, &why);
  failed_with(dsn, rc, store, why, code, words);
}

static void bad_dsns(void **state) {
  (void)state;
  open_fails("", NULL, -EINVAL, "");
  open_fails("no-such-store", NULL, -EINVAL, "no-such-store");
  open_fails("flock:relative/dir", NULL, -EINVAL, "relative");
  open_fails("in-memory:?bogus=1", NULL, -EINVAL, "bogus");
  /* An encoded option name is the option it spells: "fall%62ack" is
   * fallback (an in-memory store needs none, and is built), and an unknown
   * option beside it is still refused. */
  ipclock_store *store = NULL;
  assert_int_equal(ipclock_store_open("in-memory?fall%62ack=flock", NULL, &store, NULL), 0);
  ipclock_store_close(store);
  open_fails("in-memory?fall%62ack=flock&bogus=1", NULL, -EINVAL, "bogus");
  struct ipclock_store_options bad_policy = {.remove_ipc = 7};
  open_fails("in-memory", &bad_policy, -EINVAL, "remove_ipc");
#if !IPCLOCK_HAVE_REDIS
  open_fails("redis://127.0.0.1:1", NULL, -ENOSYS, "redis");
#endif
}

/* ipclock_store_open_kinds(): the kinds named, and no other. */
static void open_kinds_fails(const char *dsn, const struct ipclock_store_kind *const *kinds,
                             size_t nkinds, int code, const char *words) {
  ipclock_store *store = (ipclock_store *)1;
  char *why = NULL;
  const int rc = ipclock_store_open_kinds(dsn, kinds, nkinds, NULL, &store, &why);
  failed_with(dsn, rc, store, why, code, words);
}

static void open_kinds(void **state) {
  (void)state;
  const struct ipclock_store_kind *const local[] = {&ipclock_kind_flock, &ipclock_kind_in_memory};
  ipclock_store *store = NULL;
  char *why = NULL;
  /* A kind's every scheme opens it, with its options. */
  assert_int_equal(ipclock_store_open_kinds("memory?metrics=off", local, 2, NULL, &store, &why), 0);
  assert_string_equal(ipclock_store_name(store), "in-memory");
  ipclock_store_close(store);
  char dsn[256];
  capi_flock_dsn(dsn, sizeof dsn, "?removeipc=ignore");
  assert_int_equal(ipclock_store_open_kinds(dsn, local, 2, NULL, &store, &why), 0);
  assert_string_equal(ipclock_store_name(store), "flock");
  ipclock_lock *lock = capi_lock(store, "kinds", NULL);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  assert_int_equal(ipclock_lock_release(lock), 0);
  ipclock_lock_destroy(lock);
  ipclock_store_close(store);
  assert_int_equal(capi_unlink_lock_file("kinds"), 0);

  /* Another kind, known to the build but not named, is refused as unknown,
   * with the kinds that were named. */
  open_kinds_fails("shm://kinds", local, 1, -EINVAL, "this program opens: flock)");
  open_kinds_fails("shm://kinds", local, 2, -EINVAL, "flock, in-memory, memory");
  open_kinds_fails("combined?stores=in-memory", local, 2, -EINVAL, "unknown store 'combined'");
  open_kinds_fails("in-memory", local, 0, -EINVAL, "unknown store 'in-memory'");
  /* The DSN's own faults, as ipclock_store_open() says them. */
  open_kinds_fails("flock:relative/dir", local, 2, -EINVAL, "relative");
  open_kinds_fails("in-memory?bogus=1", local, 2, -EINVAL, "bogus");
  open_kinds_fails("in-memory?metrics=some", local, 2, -EINVAL, "metrics=some");
  /* Degraded mode may build a store of any kind. */
  open_kinds_fails("in-memory?fallback=flock", local, 2, -EINVAL, "degraded mode");
  const struct ipclock_store_kind *const with_null[] = {&ipclock_kind_flock, NULL};
  open_kinds_fails("flock", with_null, 2, -EINVAL, "kinds[1] is NULL");
  assert_int_equal(ipclock_store_open_kinds("flock", NULL, 1, NULL, &store, NULL), -EINVAL);
  struct ipclock_store_options bad_policy = {.remove_ipc = 7};
  store = (ipclock_store *)1;
  assert_int_equal(ipclock_store_open_kinds("in-memory", local, 2, &bad_policy, &store, &why),
                   -EINVAL);
  assert_null(store);
  assert_non_null(strstr(why, "ipclock_store_open_kinds: unknown remove_ipc policy 7"));
  free(why);
#if !IPCLOCK_HAVE_REDIS
  const struct ipclock_store_kind *const remote[] = {&ipclock_kind_redis};
  open_kinds_fails("redis://127.0.0.1:1", remote, 1, -ENOSYS, "redis");
#endif
}

/* The DSN that a test server's script (tools/test-servers) exports in
 * `env`, or NULL, said, when it is unset; a failure under CI=true. */
static const char *server_dsn(const char *env) {
  const char *dsn = getenv(env);
  if (dsn != NULL && dsn[0] != '\0') return dsn;
  const char *ci = getenv("CI");
  if (ci != NULL && strcmp(ci, "true") == 0) fail_msg("%s is unset under CI=true", env);
  print_message("skipped: %s is unset\n", env);
  return NULL;
}

/* Two locks on `name` in the store of `dsn`: one holder at a time, and a
 * wait that the release ends. `fence` is the fence's result to expect (0
 * or -ENODATA), or 1 for either. */
static void one_holder_at_a_time(const char *dsn, const char *name, int fence) {
  ipclock_store *store = capi_open(dsn);
  ipclock_lock *a = capi_lock(store, name, NULL);
  ipclock_lock *b = capi_lock(store, name, NULL);
  assert_int_equal(ipclock_lock_acquire(a, IPCLOCK_NONBLOCK, 0), 0);
  assert_int_equal(ipclock_lock_acquire(b, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  assert_int_equal(ipclock_lock_acquire(b, 0, 100), IPCLOCK_BUSY);
  uint64_t token = 0;
  if (fence != 1) assert_int_equal(ipclock_lock_fence(a, &token), fence);
  assert_int_equal(ipclock_lock_release(a), 0);
  assert_int_equal(ipclock_lock_acquire(b, 0, 1000), 0);
  assert_int_equal(ipclock_lock_release(b), 0);
  ipclock_lock_destroy(a);
  ipclock_lock_destroy(b);
  ipclock_store_close(store);
}

/* A remote store under test: its scheme, whether the build has it, the
 * variable its test server's DSN is in, the query to add to that DSN, and
 * the fence's result to expect (see one_holder_at_a_time). */
struct remote_case {
  const char *scheme;
  int built;
  const char *env;
  const char *query;
  int fence;
};

static struct remote_case memcached_case = {"memcached", IPCLOCK_HAVE_MEMCACHED,
                                            "IPCLOCK_TEST_MEMCACHED", "?secret=none", -ENODATA};
static struct remote_case zookeeper_case = {"zookeeper", IPCLOCK_HAVE_ZOOKEEPER,
                                            "IPCLOCK_TEST_ZOOKEEPER", "?secret=none", 0};
static struct remote_case etcd_case = {"etcd", IPCLOCK_HAVE_ETCD, "IPCLOCK_TEST_ETCD",
                                       "/capi?ttl=5", 0};

/* The remote store of the remote_case in `*state` through its test server;
 * without it in the build, an open of its scheme fails with -ENOSYS naming
 * it. */
static void remote_store(void **state) {
  const struct remote_case *c = *state;
  if (!c->built) {
    char down[64];
    snprintf(down, sizeof(down), "%s://127.0.0.1:1", c->scheme);
    open_fails(down, NULL, -ENOSYS, c->scheme);
    return;
  }
  const char *base = server_dsn(c->env);
  if (base == NULL) skip();
  char dsn[512];
  char name[64];
  snprintf(dsn, sizeof(dsn), "%s%s", base, c->query);
  snprintf(name, sizeof(name), "capi-remote-%d", (int)getpid());
  one_holder_at_a_time(dsn, name, c->fence);
}

/* The SQL stores through the C API: MySQL named locks and the table store
 * on the test servers, and on SQLite. */
static void sql_stores(void **state) {
  (void)state;
  if (IPCLOCK_HAVE_MYSQL) {
    const char *dsn = server_dsn("IPCLOCK_TEST_MYSQL");
    if (dsn != NULL) one_holder_at_a_time(dsn, "capi-sql", 1);
    dsn = server_dsn("IPCLOCK_TEST_MYSQL_TABLE");
    if (dsn != NULL) one_holder_at_a_time(dsn, "capi-sql", 1);
  }
  if (IPCLOCK_HAVE_POSTGRES) {
    const char *dsn = server_dsn("IPCLOCK_TEST_POSTGRES_TABLE");
    if (dsn != NULL) one_holder_at_a_time(dsn, "capi-sql", 1);
  }
  if (IPCLOCK_HAVE_SQLITE) {
    char dsn[128];
    snprintf(dsn, sizeof(dsn), "sqlite://%s/capi.db", capi_dir);
    one_holder_at_a_time(dsn, "capi-sql", 1);
  }
}

/* The version macros, the library's answer and Meson's own record of the
 * project's version (meson-info/ in the build dir) are one version. */
static void version_is_mesons(void **state) {
  (void)state;
  assert_int_equal(ipclock_version_number(), IPCLOCK_VERSION_NUMBER);
  assert_string_equal(ipclock_version(), IPCLOCK_VERSION_STRING);
  assert_int_equal(IPCLOCK_VERSION_NUMBER, IPCLOCK_VERSION_MAJOR * 1000000 +
                                               IPCLOCK_VERSION_MINOR * 1000 +
                                               IPCLOCK_VERSION_PATCH);
  char parts[64];
  snprintf(parts, sizeof(parts), "%d.%d.%d", IPCLOCK_VERSION_MAJOR, IPCLOCK_VERSION_MINOR,
           IPCLOCK_VERSION_PATCH);
  assert_string_equal(parts, IPCLOCK_VERSION_STRING);

  const char *build = getenv("IPCLOCK_BUILD_ROOT");
  if (build == NULL) fail_msg("IPCLOCK_BUILD_ROOT is unset (meson test sets it)");
  char path[512];
  snprintf(path, sizeof(path), "%s/meson-info/intro-projectinfo.json", build);
  FILE *f = fopen(path, "r");
  if (f == NULL) fail_msg("cannot read %s", path);
  char json[4096];
  size_t n = fread(json, 1, sizeof(json) - 1, f);
  fclose(f);
  json[n] = '\0';
  char want[96];
  snprintf(want, sizeof(want), "\"version\": \"%s\"", ipclock_version());
  if (strstr(json, want) == NULL) fail_msg("%s does not say %s: %s", path, want, json);
}

static void stores_describe_themselves(void **state) {
  (void)state;
  ipclock_store *memory = capi_open("in-memory");
  assert_string_equal(ipclock_store_name(memory), "in-memory");
  assert_true(strlen(ipclock_store_describe(memory)) > 0);
  assert_int_equal(ipclock_store_scope(memory), IPCLOCK_SCOPE_PROCESS);
  assert_int_equal(ipclock_store_capabilities(memory),
                   IPCLOCK_CAP_BLOCKING | IPCLOCK_CAP_EXPIRING | IPCLOCK_CAP_SHARED |
                       IPCLOCK_CAP_FENCING | IPCLOCK_CAP_COUNTING);
  ipclock_store_close(memory);

  char dsn[128];
  capi_flock_dsn(dsn, sizeof(dsn), "");
  ipclock_store *files = capi_open(dsn);
  assert_string_equal(ipclock_store_name(files), "flock");
  if (strstr(ipclock_store_describe(files), capi_dir) == NULL) {
    fail_msg("'%s' does not name %s", ipclock_store_describe(files), capi_dir);
  }
  assert_int_equal(ipclock_store_scope(files), IPCLOCK_SCOPE_LOCAL);
  assert_int_equal(ipclock_store_capabilities(files),
                   IPCLOCK_CAP_BLOCKING | IPCLOCK_CAP_SHARED | IPCLOCK_CAP_FENCING |
                       IPCLOCK_CAP_OWNER_DEATH);
  ipclock_store_close(files);

  capi_flock_dsn(dsn, sizeof(dsn), "?record=false");
  files = capi_open(dsn);
  assert_int_equal(ipclock_store_capabilities(files), IPCLOCK_CAP_BLOCKING | IPCLOCK_CAP_SHARED);
  ipclock_store_close(files);
}

/* What a diagnostic handler was given, copied. */
struct seen {
  int calls;
  struct ipclock_diagnostic last;
  char text[512];
  char store[128];
  char resource[64];
  char message[512];
};

static void record(const struct ipclock_diagnostic *d, void *arg) {
  struct seen *seen = arg;
  ++seen->calls;
  seen->last = *d;
  snprintf(seen->text, sizeof(seen->text), "%s", d->text);
  snprintf(seen->store, sizeof(seen->store), "%s", d->store);
  snprintf(seen->resource, sizeof(seen->resource), "%.*s", (int)d->resource_len, d->resource);
  snprintf(seen->message, sizeof(seen->message), "%s", d->message);
}

/* Releases a lock of `store` whose 20 ms lease ran out: one lease overrun. */
static void overrun(ipclock_store *store) {
  struct ipclock_lock_options short_lease = {.ttl_ms = 20};
  ipclock_lock *lock = capi_lock(store, "overrun", &short_lease);
  assert_int_equal(ipclock_lock_acquire(lock, 0, 0), 0);
  capi_sleep_ms(60);
  assert_int_equal(ipclock_lock_release(lock), IPCLOCK_LOST);
  ipclock_lock_destroy(lock);
}

static void diagnostic_handlers(void **state) {
  (void)state;
  struct seen at_open = {0}, later = {0}, process = {0};
  ipclock_set_diagnostic_handler(record, &process);

  /* The handler given at open gets the store's diagnostics. */
  struct ipclock_store_options opts = {.diagnostics = record, .diagnostics_arg = &at_open};
  ipclock_store *store = NULL;
  assert_int_equal(ipclock_store_open("in-memory", &opts, &store, NULL), 0);
  overrun(store);
  assert_int_equal(at_open.calls, 1);
  assert_int_equal(at_open.last.kind, IPCLOCK_DIAG_LEASE_OVERRUN);
  assert_int_equal(at_open.last.severity, IPCLOCK_DIAG_WARNING);
  assert_int_equal(at_open.last.code, IPCLOCK_LOST);
  assert_int_equal(at_open.last.ttl_ms, 20);
  assert_true(at_open.last.overrun_ms > 0);
  assert_string_equal(at_open.resource, "overrun");
  assert_string_equal(at_open.store, ipclock_store_describe(store));
  assert_int_equal(strncmp(at_open.text, "ipclock: ", 9), 0);
  assert_non_null(strstr(at_open.message, "lease ran out"));

  /* Another handler replaces it; none leaves them to the process default. */
  assert_int_equal(ipclock_store_set_diagnostic_handler(store, record, &later), 0);
  overrun(store);
  assert_int_equal(later.calls, 1);
  assert_int_equal(ipclock_store_set_diagnostic_handler(store, NULL, NULL), 0);
  overrun(store);
  assert_int_equal(process.calls, 1);
  assert_int_equal(process.last.kind, IPCLOCK_DIAG_LEASE_OVERRUN);
  assert_int_equal(at_open.calls + later.calls, 2);

  /* NULL puts stderr back as the process default. */
  ipclock_set_diagnostic_handler(NULL, NULL);
  char path[128];
  snprintf(path, sizeof(path), "%s/stderr", capi_dir);
  int file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  assert_true(file >= 0);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  assert_true(dup2(file, STDERR_FILENO) >= 0);
  overrun(store);
  assert_true(dup2(saved, STDERR_FILENO) >= 0);
  close(saved);
  char written[1024] = {0};
  assert_true(pread(file, written, sizeof(written) - 1, 0) > 0);
  close(file);
  assert_non_null(strstr(written, "lease ran out"));
  assert_int_equal(process.calls, 1);
  ipclock_store_close(store);
}

/* A held lock handed to another handle as text, on a store whose locks can
 * be: SQLite's table (the server stores are the same code, tested in their
 * own suites). */
static void serialized_locks(void **state) {
  (void)state;
  ipclock_store *files = capi_open_flock();
  ipclock_lock *local = capi_lock(files, "tied", NULL);
  char *text = (char *)1;
  assert_int_equal(ipclock_lock_acquire(local, 0, 0), 0);
  assert_int_equal(ipclock_lock_serialize(local, &text), -EPERM);
  assert_null(text);
  assert_non_null(strstr(ipclock_lock_error(local), "serialized"));
  ipclock_lock_destroy(local);
  ipclock_lock *other = NULL;
  char *why = NULL;
  assert_int_equal(ipclock_lock_from_serialized(files, "x", NULL, &other, &why), -EPERM);
  assert_null(other);
  free(why);
  ipclock_store_close(files);
#if IPCLOCK_HAVE_SQLITE
  char dsn[128];
  snprintf(dsn, sizeof(dsn), "sqlite://%s/handover.db", capi_dir);
  ipclock_store *store = capi_open(dsn);
  assert_true((ipclock_store_capabilities(store) & IPCLOCK_CAP_SERIALIZABLE) != 0);
  ipclock_lock *first = capi_lock(store, "handed-over", NULL);
  assert_int_equal(ipclock_lock_serialize(first, &text), -EPERM); /* not held */
  assert_int_equal(ipclock_lock_acquire(first, 0, 0), 0);
  assert_int_equal(ipclock_lock_serialize(first, &text), 0);
  assert_non_null(text);
  assert_int_equal(ipclock_lock_abandon(first), 0);
  assert_int_equal(ipclock_lock_is_acquired(first), 0);
  ipclock_lock_destroy(first);

  ipclock_lock *second = NULL;
  assert_int_equal(ipclock_lock_from_serialized(store, text, NULL, &second, NULL), 0);
  assert_int_equal(ipclock_lock_is_acquired(second), 1);
  assert_int_equal(ipclock_lock_check(second), 0);
  ipclock_lock *rival = capi_lock(store, "handed-over", NULL);
  assert_int_equal(ipclock_lock_acquire(rival, IPCLOCK_NONBLOCK, 0), IPCLOCK_BUSY);
  assert_int_equal(ipclock_lock_release(second), 0);
  ipclock_lock_destroy(second);

  /* Released since: the text takes over nothing. Altered: refused. */
  assert_int_equal(ipclock_lock_from_serialized(store, text, NULL, &second, &why), IPCLOCK_LOST);
  assert_null(second);
  assert_non_null(strstr(why, "no longer held"));
  free(why);
  text[strlen(text) - 1] ^= 1;
  assert_int_equal(ipclock_lock_from_serialized(store, text, NULL, &second, NULL), -EINVAL);
  free(text);
  assert_int_equal(ipclock_lock_acquire(rival, IPCLOCK_NONBLOCK, 0), 0);
  ipclock_lock_destroy(rival);
  ipclock_store_close(store);
#endif
}

/* A semaphore of limit 3 made on `store`'s semaphore store, taking
 * `weight`: `*lock`, or the make's return value. */
static int make_semaphore(ipclock_store *semaphores, uint32_t weight, ipclock_lock **lock) {
  struct ipclock_lock_options opts = {.permits = 3, .weight = weight};
  char *why = NULL;
  const int rc = ipclock_lock_create(semaphores, "c-semaphore", 11, &opts, lock, &why);
  free(why);
  return rc;
}

/* Counting semaphores from C: slot locks over flock (weights all or none,
 * slots told, another process counted) and the kernel count of the
 * semaphore store (no slots); a weight over the limit refused. */
static void semaphores(void **state) {
  (void)state;
  ipclock_store *flock = capi_open_flock();
  ipclock_store *sems = NULL;
  char *why = NULL;
  assert_int_equal(ipclock_store_open_semaphores(flock, &sems, &why), 0);
  free(why);
  ipclock_store_close(flock); /* the semaphore store keeps what it needs */
  const unsigned caps = ipclock_store_capabilities(sems);
  assert_true((caps & IPCLOCK_CAP_COUNTING) != 0 && (caps & IPCLOCK_CAP_WEIGHTED) != 0);
  ipclock_lock *two = NULL;
  assert_int_equal(make_semaphore(sems, 2, &two), 0);
  assert_int_equal(ipclock_lock_acquire(two, IPCLOCK_NONBLOCK, 0), 0);
  uint32_t slots[3] = {9, 9, 9};
  assert_int_equal(ipclock_lock_slots(two, slots, 3), 2);
  assert_true(slots[0] < slots[1] && slots[1] < 3);
  assert_int_equal(ipclock_lock_slots(two, NULL, 0), 2);
  assert_int_equal(ipclock_lock_slots(two, NULL, 1), -EINVAL);
  const pid_t child = fork();
  if (child == 0) {
    ipclock_store *own = capi_open_flock();
    ipclock_store *own_sems = NULL;
    char *e = NULL;
    if (ipclock_store_open_semaphores(own, &own_sems, &e) != 0) _exit(10);
    ipclock_lock *heavy = NULL;
    ipclock_lock *light = NULL;
    if (make_semaphore(own_sems, 2, &heavy) != 0 || make_semaphore(own_sems, 1, &light) != 0) {
      _exit(11);
    }
    if (ipclock_lock_acquire(heavy, IPCLOCK_NONBLOCK, 0) != IPCLOCK_BUSY) _exit(12);
    if (ipclock_lock_acquire(light, IPCLOCK_NONBLOCK, 0) != 0) _exit(13);
    uint32_t slot = 9;
    if (ipclock_lock_slots(light, &slot, 1) != 1 || slot == slots[0] || slot == slots[1]) {
      _exit(14);
    }
    _exit(ipclock_lock_release(light) == 0 ? 0 : 15);
  }
  assert_int_equal(capi_exit_code(child), 0);
  assert_int_equal(ipclock_lock_release(two), 0);
  ipclock_lock_destroy(two);
  ipclock_lock *over = (ipclock_lock *)1;
  assert_int_equal(make_semaphore(sems, 4, &over), -EINVAL);
  assert_null(over);
  ipclock_store_close(sems);

  /* The kernel count: the semaphore store itself, which keeps no slots. */
  ipclock_store *sysv = capi_open("semaphore");
  assert_int_equal(ipclock_store_open_semaphores(sysv, &sems, &why), 0);
  free(why);
  assert_string_equal(ipclock_store_name(sems), ipclock_store_name(sysv));
  ipclock_lock *three = NULL;
  assert_int_equal(make_semaphore(sems, 3, &three), 0);
  assert_int_equal(ipclock_lock_acquire(three, IPCLOCK_NONBLOCK, 0), 0);
  assert_int_equal(ipclock_lock_slots(three, slots, 3), 0);
  assert_int_equal(ipclock_lock_release(three), 0);
  ipclock_lock_destroy(three);
  ipclock_store_close(sems);
  ipclock_store_close(sysv);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_dsns),
      cmocka_unit_test(open_kinds),
      cmocka_unit_test(version_is_mesons),
      cmocka_unit_test(stores_describe_themselves),
      cmocka_unit_test(diagnostic_handlers),
      cmocka_unit_test(serialized_locks),
      cmocka_unit_test(semaphores),
      cmocka_unit_test(sql_stores),
      {"memcached_store", remote_store, NULL, NULL, &memcached_case},
      {"zookeeper_store", remote_store, NULL, NULL, &zookeeper_case},
      {"etcd_store", remote_store, NULL, NULL, &etcd_case},
  };
  return cmocka_run_group_tests_name("capi_store", tests, capi_setup, capi_teardown);
}
