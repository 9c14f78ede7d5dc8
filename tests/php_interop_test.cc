// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ipclock's flock store against PHP's Symfony Lock FlockStore
// (tests/php/flock_peer.php) on the same dir and resource: the file names of
// spec/interop.md, and exclusion in both directions, through the library and
// through `ipclock run`.
//
// Without php-cli or php-symfony-lock the tests are skipped, saying why;
// with IPCLOCK_REQUIRE_PHP=1 (Meson: -Dphp_interop=enabled) they fail instead.

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/lock.h"
#include "flock_test_util.h"
#include "spawn_util.h"
#include "php_peer.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {


constexpr char kPlainResource[] = "invoice-42";
constexpr char kPlainFile[] = "sf.invoice-42.PDBLwhy.lock";
constexpr char kOddResource[] = "<?php echo \"% hello word ! %\" ?>";
constexpr char kOddFile[] = "sf.-php-echo-hello-word-.Sz2dDSf.lock";

std::string PeerScript() { return PhpPeerScript("flock_peer.php"); }

PhpPeerNeeds PeerNeeds() { return {PeerScript(), true, "", "php-cli php-symfony-lock"}; }

#define REQUIRE_PHP() REQUIRE_PHP_PEER(PeerNeeds(), PhpRequired())

// A PHP peer holding a lock until Release().
class PhpHolder : public PhpPeerHolder {
 public:
  PhpHolder(const std::string& dir, const std::string& resource, const char* mode)
      : PhpPeerHolder({"php", PeerScript(), dir, resource, mode}) {}
};

// Runs the peer in try mode: "acquired" or "busy".
std::string PhpTry(const std::string& dir, const std::string& resource, const char* mode) {
  return RunPhpPeer({"php", PeerScript(), dir, resource, mode});
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
  }
  closedir(d);
  return names;
}

int RunCli(const std::vector<std::string>& args) {
  std::vector<std::string> argv = args;
  argv.insert(argv.begin(), IpclockPath());
  if (argv[0].empty()) fail_msg("ipclock binary not found (IPCLOCK_BUILD_ROOT unset?)");
  return WaitChild(Spawn(argv));
}

void test_file_names_match_symfony(void** state) {
  (void)state;
  REQUIRE_PHP();
  const std::pair<const char*, const char*> vectors[] = {{kPlainResource, kPlainFile},
                                                         {kOddResource, kOddFile}};
  for (const auto& [resource, file] : vectors) {
    assert_string_equal(ipclock::FlockFileName(resource).c_str(), file);
    const std::string php_dir = MakeTempDir();
    assert_string_equal(PhpTry(php_dir, resource, "try").c_str(), "acquired");
    std::vector<std::string> php_names = ListDir(php_dir);
    assert_int_equal(php_names.size(), 1);
    assert_string_equal(php_names[0].c_str(), file);

    const std::string our_dir = MakeTempDir();
    {
      ipclock::Lock lock = LockOrFail(FlockStoreIn(our_dir), resource);
      ASSERT_OK(lock.Acquire(absl::Seconds(5)));
      ASSERT_OK(lock.Release());
    }
    std::vector<std::string> our_names = ListDir(our_dir);
    assert_int_equal(our_names.size(), 1);
    assert_string_equal(our_names[0].c_str(), file);
  }
}

void test_php_holds_ipclock_is_refused(void** state) {
  (void)state;
  REQUIRE_PHP();
  for (const char* resource : {kPlainResource, kOddResource}) {
    const std::string dir = MakeTempDir();
    PhpHolder php(dir, resource, "hold");

    std::shared_ptr<ipclock::Store> store = FlockStoreIn(dir);
    ipclock::Lock lock = LockOrFail(store, resource);
    absl::StatusOr<bool> got = lock.TryAcquire();
    ASSERT_OK(got);
    assert_false(*got);
    assert_int_equal(
        RunCli({"run", "--store", "flock://" + dir, "--key", resource, "-n", "--", "true"}), 1);

    php.Release();
    got = lock.TryAcquire();
    ASSERT_OK(got);
    assert_true(*got);
    // PHP's file was empty: our count starts at 1, and PHP's clean release
    // is not mistaken for a death.
    assert_true(lock.fence().has_value());
    assert_int_equal(*lock.fence(), 1);
    assert_false(lock.previous_owner_died());
    ASSERT_OK(lock.Release());
  }
}

void test_ipclock_holds_php_is_refused(void** state) {
  (void)state;
  REQUIRE_PHP();
  for (const char* resource : {kPlainResource, kOddResource}) {
    const std::string dir = MakeTempDir();
    {
      ipclock::Lock lock = LockOrFail(FlockStoreIn(dir), resource);
      ASSERT_OK(lock.Acquire(absl::Seconds(5)));
      assert_string_equal(PhpTry(dir, resource, "try").c_str(), "busy");
      assert_string_equal(PhpTry(dir, resource, "try-read").c_str(), "busy");
      ASSERT_OK(lock.Release());
      assert_string_equal(PhpTry(dir, resource, "try").c_str(), "acquired");
    }

    // The same through the command line.
    const std::string ready = MakeTempDir() + "/ready";
    SpawnOptions options;
    options.new_process_group = true;
    pid_t holder = Spawn({IpclockPath(), "run", "--store", "flock://" + dir, "--key", resource,
                          "--", "sh", "-c", absl::StrCat(": > '", ready, "'; exec sleep 60")},
                         options);
    if (!WaitForFile(ready, 20)) {
      kill(-holder, SIGKILL);
      WaitPlain(holder, 5);
      fail_msg("ipclock run never started its command");
    }
    assert_string_equal(PhpTry(dir, resource, "try").c_str(), "busy");
    kill(-holder, SIGTERM);
    assert_int_equal(WaitChild(holder), 128 + SIGTERM);
    assert_string_equal(PhpTry(dir, resource, "try").c_str(), "acquired");
  }
}

void test_shared_locks_with_php(void** state) {
  (void)state;
  REQUIRE_PHP();
  const std::string dir = MakeTempDir();
  PhpHolder php(dir, kOddResource, "hold-read");
  std::shared_ptr<ipclock::Store> store = FlockStoreIn(dir);
  ipclock::Lock reader = LockOrFail(store, kOddResource);
  ipclock::Lock writer = LockOrFail(store, kOddResource);
  absl::StatusOr<bool> got = reader.TryAcquire(ipclock::LockMode::kShared);
  ASSERT_OK(got);
  assert_true(*got);
  got = writer.TryAcquire(ipclock::LockMode::kExclusive);
  ASSERT_OK(got);
  assert_false(*got);
  ASSERT_OK(reader.Release());
  php.Release();
  got = writer.TryAcquire(ipclock::LockMode::kExclusive);
  ASSERT_OK(got);
  assert_true(*got);
}

}  // namespace
}  // namespace ipclock_test

int main() {
  using namespace ipclock_test;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_file_names_match_symfony),
      cmocka_unit_test(test_php_holds_ipclock_is_refused),
      cmocka_unit_test(test_ipclock_holds_php_is_refused),
      cmocka_unit_test(test_shared_locks_with_php),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
