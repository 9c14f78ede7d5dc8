// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The remote stores' client libraries, loaded on first use
// (src/platform/client_library.h): a local lock maps none of them, nor what
// they would drag in (Kerberos, LDAP, TLS), while the command runs; a store
// that needs one maps it; a missing one is Unimplemented, naming the package
// to install; and a failure injected into one call of a library's table
// reaches the caller as the store's error.
//
// This program links no client library, so that every load here is a real
// dlopen() of the soname.

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli_util.h"
#include "ipclock/store_factory.h"
#include "ipclock_config.h"
#include "platform/client_library.h"
#include "platform/hiredis_calls.h"
#include "platform/libpq_calls.h"
#include "platform/mariadb_calls.h"
#include "platform/memcached_calls.h"
#include "platform/sqlite_calls.h"
#include "platform/zookeeper_calls.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

// What a program that takes a local lock must not map: the client
// libraries, and the Kerberos, LDAP, SASL and TLS stacks libpq and the
// MariaDB connector pull in.
const char* const kForbidden[] = {
    "libhiredis",  "libpq.",    "libmariadb", "libmysqlclient", "libsqlite3",
    "libmemcached", "libzookeeper", "libkrb5",   "libgssapi",      "libk5crypto",
    "libldap",     "liblber",   "libsasl2",   "libgnutls",      "libssl.",
    "libcrypto.",  "libp11-kit", "libnettle",  "libhogweed",     "libgmp",
};

// The shared objects `ipclock run --store DSN` maps while its command runs,
// as the command reads them from /proc/<ipclock's pid>/maps.
std::vector<std::string> MappedWhileRunning(const std::string& dsn) {
  CliResult r = RunCli({"run", "--store", dsn, "--key", "maps", "--", "sh", "-c",
                        "cat /proc/$PPID/maps"});
  ExpectCode(r, 0, "ipclock run ... -- cat /proc/$PPID/maps");
  std::vector<std::string> objects;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    const size_t slash = line.find('/');
    if (slash == absl::string_view::npos || !absl::StrContains(line, ".so")) continue;
    std::string path(line.substr(slash));
    if (objects.empty() || objects.back() != path) objects.push_back(path);
  }
  if (objects.empty()) fail_msg("no shared object in ipclock's maps:\n%s", r.out.c_str());
  return objects;
}

bool Maps(const std::vector<std::string>& objects, absl::string_view name,
          std::string* path = nullptr) {
  for (const std::string& o : objects) {
    if (absl::StrContains(o.substr(o.rfind('/')), name)) {
      if (path != nullptr) *path = o;
      return true;
    }
  }
  return false;
}

constexpr bool kAnyRemoteStore = IPCLOCK_HAVE_REDIS || IPCLOCK_HAVE_POSTGRES ||
                                  IPCLOCK_HAVE_MYSQL || IPCLOCK_HAVE_SQLITE ||
                                  IPCLOCK_HAVE_MEMCACHED || IPCLOCK_HAVE_ZOOKEEPER;

// A build without a remote store loads nothing and is checked all the same.
void SkipInLinkBuild() {
  if (kAnyRemoteStore && !ipclock::ClientLibrariesLoadedOnFirstUse()) {
    print_message("skipped: -Dclient_libraries=link links the client libraries\n");
    skip();
  }
}

void test_local_lock_maps_no_client_library(void** state) {
  (void)state;
  SkipInLinkBuild();
  const std::vector<std::string> objects =
      MappedWhileRunning(FreshStore() + "?removeipc=ignore");
  for (const char* name : kForbidden) {
    std::string path;
    if (Maps(objects, name, &path)) {
      fail_msg("a flock lock maps %s (%zu shared objects in all)", path.c_str(), objects.size());
    }
  }
  print_message("a flock lock maps %zu shared objects\n", objects.size());
}

#if IPCLOCK_HAVE_SQLITE
std::string SqliteDsn() { return absl::StrCat("sqlite://", MakeTempDir(), "/locks.db"); }

// The same check sees a library that is loaded: SQLite's, for a sqlite://
// DSN, and nothing of the other stores'.
void test_remote_dsn_maps_its_library_only(void** state) {
  (void)state;
  SkipInLinkBuild();
  const std::vector<std::string> objects = MappedWhileRunning(SqliteDsn());
  assert_true(Maps(objects, "libsqlite3"));
  for (const char* name : kForbidden) {
    if (absl::string_view(name) == "libsqlite3") continue;
    std::string path;
    if (Maps(objects, name, &path)) fail_msg("a sqlite lock maps %s", path.c_str());
  }
}

// Whether `unshare --mount` works here (not in a chroot whose / is no mount
// point, nor without CAP_SYS_ADMIN); says why not.
bool UnshareMountWorks() {
  CliResult probe = RunProgram({"unshare", "--mount", "true"});
  if (probe.code == 0) return true;
  print_message("skipped: unshare --mount does not work here: %s\n", probe.err.c_str());
  return false;
}

// Where the library is not there, as on a host without the package: the
// command says what to install and ends at once (69, as for a store left
// out of the build). The library is hidden by a bind mount in a mount
// namespace of the command's own.
void test_cli_without_the_library(void** state) {
  (void)state;
  SkipInLinkBuild();
  SKIP_UNLESS_ROOT();
  // skip() leaves by longjmp: nothing that owns memory may live yet.
  if (!UnshareMountWorks()) skip();
  std::string path;
  if (!Maps(MappedWhileRunning(SqliteDsn()), "libsqlite3", &path)) fail_msg("no libsqlite3");
  CliResult r = RunProgram(
      {"unshare", "--mount", "sh", "-c",
       absl::StrCat("mount --bind /dev/null '", path, "' && exec \"$@\""), "sh", Cli(), "run",
       "--store", SqliteDsn(), "--key", "k", "--", "true"});
  ExpectCode(r, 69, "ipclock run without libsqlite3");
  ExpectContains(r.err, absl::StrCat("install ", IPCLOCK_SQLITE_PACKAGE), "names the package");
  ExpectContains(r.err, IPCLOCK_SQLITE_SONAME, "names the soname");
  ExpectContains(r.err, "sqlite", "names the store");
}
#endif

// For every remote store of this build, in a child that has loaded
// nothing: with its library missing, StoreFromDsn() is Unimplemented and
// names the store, the soname and the package; the failure is not kept, so
// the library loads once it is there.
struct Remote {
  const char* dsn;
  ipclock::ClientLibrary& (*library)();
};

void test_missing_library_names_the_package(void** state) {
  (void)state;
  SkipInLinkBuild();
  std::vector<Remote> remotes;
#if IPCLOCK_HAVE_REDIS
  remotes.push_back({"redis://127.0.0.1:1", &ipclock::HiredisLibrary});
#endif
#if IPCLOCK_HAVE_POSTGRES
  remotes.push_back({"postgresql+advisory://127.0.0.1:1/db", &ipclock::LibpqLibrary});
  remotes.push_back({"postgresql://127.0.0.1:1/db", &ipclock::LibpqLibrary});
#endif
#if IPCLOCK_HAVE_MYSQL
  remotes.push_back({"mysql+advisory://127.0.0.1:1/db", &ipclock::MariadbLibrary});
#endif
#if IPCLOCK_HAVE_SQLITE
  remotes.push_back({"sqlite:///nonexistent/locks.db", &ipclock::SqliteLibrary});
#endif
#if IPCLOCK_HAVE_MEMCACHED
  remotes.push_back({"memcached://127.0.0.1:1", &ipclock::MemcachedLibrary});
#endif
#if IPCLOCK_HAVE_ZOOKEEPER
  remotes.push_back({"zookeeper://127.0.0.1:1?session_timeout=0.5", &ipclock::ZooKeeperLibrary});
#endif
  if (remotes.empty()) {
    print_message("skipped: this build has no remote store\n");
    skip();
  }
  for (const Remote& remote : remotes) {
    pid_t child = ForkChild([&] {
      ipclock::ClientLibrary& library = remote.library();
      if (library.loaded()) return 10;
      library.SetFileForTest("libipclock-test-no-such-library.so.0");
      absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(remote.dsn);
      const std::string message(store.status().message());
      if (store.status().code() != absl::StatusCode::kUnimplemented) {
        fprintf(stderr, "%s: %s\n", remote.dsn, store.status().ToString().c_str());
        return 11;
      }
      const std::string scheme(absl::string_view(remote.dsn).substr(
          0, absl::string_view(remote.dsn).find(':')));
      for (const std::string& part :
           {absl::StrCat("install ", library.info().package, ")"),
            std::string(library.info().soname), scheme}) {
        if (!absl::StrContains(message, part)) {
          fprintf(stderr, "%s: '%s' lacks '%s'\n", remote.dsn, message.c_str(), part.c_str());
          return 12;
        }
      }
      // Installed since: the next store loads it.
      library.SetFileForTest(nullptr);
      store = ipclock::StoreFromDsn(remote.dsn);
      if (store.status().code() == absl::StatusCode::kUnimplemented || !library.loaded()) {
        fprintf(stderr, "%s again: %s\n", remote.dsn, store.status().ToString().c_str());
        return 13;
      }
      return 0;
    });
    const int code = WaitChild(child);
    if (code != 0) fail_msg("%s: child exited with %d", remote.dsn, code);
  }
}

#if IPCLOCK_HAVE_SQLITE
// SQLITE_FULL from one sqlite3_step(), as a full disk gives it.
ipclock::ClientCall<decltype(&::sqlite3_step)>::Function g_real_step = nullptr;
int g_full_steps = 0;
int FullOnce(sqlite3_stmt* stmt) {
  if (g_full_steps > 0) {
    --g_full_steps;
    return SQLITE_FULL;
  }
  return g_real_step(stmt);
}

void test_fault_injected_into_one_sqlite_call(void** state) {
  (void)state;
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(SqliteDsn());
  ASSERT_OK(store);
  ipclock::Lock lock = LockOrFail(*store, "fault");
  // Once first, so that the table exists.
  TakeAndRelease(lock);
  g_real_step = ipclock::Sqlite().sqlite3_step.Replace(&FullOnce);
  g_full_steps = 1;
  absl::StatusOr<bool> got = lock.TryAcquire();
  ipclock::Sqlite().sqlite3_step.Replace(g_real_step);
  ASSERT_CODE(got, absl::StatusCode::kResourceExhausted);
  ExpectContains(std::string(got.status().message()), "sqlite://", "names the store");
  ExpectContains(std::string(got.status().message()), "fault", "names the resource");
  assert_int_equal(g_full_steps, 0);
  // Nothing was held: the next try takes the lock.
  TakeAndRelease(lock);
}
#endif

#if IPCLOCK_HAVE_REDIS
// A reply that never comes: hiredis's connection error, as a reset gives it.
int LostReply(redisContext* c, void** reply) {
  c->err = REDIS_ERR_IO;
  snprintf(c->errstr, sizeof(c->errstr), "Connection reset by peer");
  errno = ECONNRESET;
  *reply = nullptr;
  return REDIS_ERR;
}

void test_fault_injected_into_one_redis_call(void** state) {
  (void)state;
  const char* dsn = RequireEnv("IPCLOCK_TEST_REDIS");
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::StoreFromDsn(dsn);
  ASSERT_OK(store);
  ipclock::Lock lock = LockOrFail(*store, UniqueResource("fault"));
  auto real = ipclock::Hiredis().redisGetReply.Replace(&LostReply);
  absl::StatusOr<bool> got = lock.TryAcquire();
  ipclock::Hiredis().redisGetReply.Replace(real);
  // Fails closed, naming the server: never "acquired" without a reply.
  ASSERT_CODE(got, absl::StatusCode::kUnavailable);
  ExpectContains(std::string(got.status().message()), "Connection reset by peer", "says why");
  assert_false(lock.is_acquired());
  // The request may have run: the same Lock takes it again (its token).
  TakeAndRelease(lock);
}
#endif

}  // namespace
}  // namespace ipclock_test

int main(void) {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_library_names_the_package),
      cmocka_unit_test(test_local_lock_maps_no_client_library),
#if IPCLOCK_HAVE_SQLITE
      cmocka_unit_test(test_remote_dsn_maps_its_library_only),
      cmocka_unit_test(test_cli_without_the_library),
      cmocka_unit_test(test_fault_injected_into_one_sqlite_call),
#endif
#if IPCLOCK_HAVE_REDIS
      cmocka_unit_test(test_fault_injected_into_one_redis_call),
#endif
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
