// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ipclock's flock store against PHP's Symfony Lock FlockStore
// (tests/php/flock_peer.php) on the same dir and resource: the file names of
// spec/interop.md, and exclusion in both directions, through the library and
// through `ipclock run`.
//
// Without php-cli or php-symfony-lock the tests are skipped, saying why;
// with --require-php (Meson: -Dphp_interop=enabled) they fail instead.

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ipclock/stores/flock_store.h"
#include "ipclock/lock.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

bool g_require_php = false;

constexpr char kPlainResource[] = "invoice-42";
constexpr char kPlainFile[] = "sf.invoice-42.PDBLwhy.lock";
constexpr char kOddResource[] = "<?php echo \"% hello word ! %\" ?>";
constexpr char kOddFile[] = "sf.-php-echo-hello-word-.Sz2dDSf.lock";

std::string AutoloadPath() {
  const char* env = getenv("IPCLOCK_SYMFONY_AUTOLOAD");
  return env != nullptr && env[0] != '\0'
             ? env
             : "/usr/share/php/Symfony/Component/Lock/autoload.php";
}

std::string PeerScript() {
  const char* root = getenv("IPCLOCK_SOURCE_ROOT");
  return absl::StrCat(root != nullptr ? root : ".", "/tests/php/flock_peer.php");
}

// Why the PHP peer cannot run here, or nullptr if it can. The text lives in
// a static so that skip()'s longjmp leaves no destructor behind.
const char* PhpMissing() {
  static std::string why;
  if (FindInPath("php").empty()) {
    why = "php is not installed (apt-get install php-cli php-symfony-lock)";
  } else if (!FileExists(AutoloadPath())) {
    why = absl::StrCat("Symfony Lock is not installed: no ", AutoloadPath(),
                       " (apt-get install php-symfony-lock)");
  } else if (!FileExists(PeerScript())) {
    why = absl::StrCat("no ", PeerScript(), " (is IPCLOCK_SOURCE_ROOT set?)");
  } else {
    return nullptr;
  }
  return why.c_str();
}

#define REQUIRE_PHP()                                      \
  do {                                                     \
    const char* why_missing = PhpMissing();                \
    if (why_missing != nullptr) {                          \
      if (g_require_php) fail_msg("%s", why_missing);      \
      print_message("skipped: %s\n", why_missing);         \
      skip();                                              \
    }                                                      \
  } while (0)

// A PHP peer holding a lock until we close its stdin.
class PhpHolder {
 public:
  PhpHolder(const std::string& dir, const std::string& resource, const char* mode) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) abort();
    SpawnOptions options;
    options.stdin_fd = in[0];
    options.stdout_fd = out[1];
    pid_ = Spawn({"php", PeerScript(), dir, resource, mode}, options);
    close(in[0]);
    close(out[1]);
    to_php_ = in[1];
    from_php_ = out[0];
  }
  ~PhpHolder() {
    if (to_php_ >= 0) close(to_php_);
    if (from_php_ >= 0) close(from_php_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      WaitPlain(pid_, 5);
    }
  }

  // The next line the peer prints, without its newline; empty on timeout.
  std::string ReadLine(double timeout_sec = 20) {
    std::string line;
    const double until = NowSeconds() + timeout_sec;
    for (;;) {
      struct pollfd p = {from_php_, POLLIN, 0};
      int ms = static_cast<int>((until - NowSeconds()) * 1000);
      if (ms <= 0 || poll(&p, 1, ms) <= 0) return line;
      char c;
      if (read(from_php_, &c, 1) != 1) return line;
      if (c == '\n') return line;
      line.push_back(c);
    }
  }

  // Lets the peer release; returns its exit status.
  int Release() {
    close(to_php_);
    to_php_ = -1;
    std::string last = ReadLine();
    if (last != "released") fail_msg("php peer said '%s', expected 'released'", last.c_str());
    int code = WaitChild(pid_);
    pid_ = -1;
    return code;
  }

 private:
  pid_t pid_ = -1;
  int to_php_ = -1;
  int from_php_ = -1;
};

// Runs the peer in try mode: "acquired" or "busy".
std::string PhpTry(const std::string& dir, const std::string& resource, const char* mode) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) abort();
  SpawnOptions options;
  options.stdout_fd = out[1];
  pid_t pid = Spawn({"php", PeerScript(), dir, resource, mode}, options);
  close(out[1]);
  std::string text;
  char buf[256];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int code = WaitChild(pid);
  if (code != 0) fail_msg("php peer (%s) exited %d: %s", mode, code, text.c_str());
  return std::string(absl::StripAsciiWhitespace(text));
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

std::shared_ptr<ipclock::Store> StoreIn(const std::string& dir) {
  ipclock::FlockStoreOptions options;
  options.dir = dir;
  absl::StatusOr<std::shared_ptr<ipclock::Store>> store = ipclock::NewFlockStore(options);
  ASSERT_OK(store);
  return *store;
}

ipclock::Lock MakeLock(const std::shared_ptr<ipclock::Store>& store, const std::string& resource) {
  absl::StatusOr<ipclock::Lock> lock = ipclock::Lock::Create(store, resource);
  ASSERT_OK(lock);
  return *std::move(lock);
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
      ipclock::Lock lock = MakeLock(StoreIn(our_dir), resource);
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
    std::string said = php.ReadLine();
    assert_string_equal(said.c_str(), "locked");

    std::shared_ptr<ipclock::Store> store = StoreIn(dir);
    ipclock::Lock lock = MakeLock(store, resource);
    absl::StatusOr<bool> got = lock.TryAcquire();
    ASSERT_OK(got);
    assert_false(*got);
    assert_int_equal(
        RunCli({"run", "--store", "flock://" + dir, "--key", resource, "-n", "--", "true"}), 1);

    assert_int_equal(php.Release(), 0);
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
      ipclock::Lock lock = MakeLock(StoreIn(dir), resource);
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
  std::string said = php.ReadLine();
  assert_string_equal(said.c_str(), "locked");
  std::shared_ptr<ipclock::Store> store = StoreIn(dir);
  ipclock::Lock reader = MakeLock(store, kOddResource);
  ipclock::Lock writer = MakeLock(store, kOddResource);
  absl::StatusOr<bool> got = reader.TryAcquire(ipclock::LockMode::kShared);
  ASSERT_OK(got);
  assert_true(*got);
  got = writer.TryAcquire(ipclock::LockMode::kExclusive);
  ASSERT_OK(got);
  assert_false(*got);
  ASSERT_OK(reader.Release());
  assert_int_equal(php.Release(), 0);
  got = writer.TryAcquire(ipclock::LockMode::kExclusive);
  ASSERT_OK(got);
  assert_true(*got);
}

}  // namespace
}  // namespace ipclock_test

int main(int argc, char** argv) {
  using namespace ipclock_test;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--require-php") == 0) g_require_php = true;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_file_names_match_symfony),
      cmocka_unit_test(test_php_holds_ipclock_is_refused),
      cmocka_unit_test(test_ipclock_holds_php_is_refused),
      cmocka_unit_test(test_shared_locks_with_php),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
