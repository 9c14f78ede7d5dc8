// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock run` in the surroundings that units and scripts get wrong:
// started with stdin, stdout or stderr closed; a service manager that has
// stopped reading its notify socket, and a journal whose socket is full;
// and what COMMAND inherits, listed by COMMAND itself on every store.

#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli_util.h"
#include "datagram_socket.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
namespace {

struct StoreCase {
  std::string name;
  std::string dsn;
};

// Every local store, each on a place of its own.
std::vector<StoreCase> LocalStores() {
  return {{"flock", FreshStore()},
          {"shm", absl::StrCat("shm://", UniqueShmName("hostile"))},
          {"semaphore", "semaphore"},
          {"posix-semaphore", "posix-semaphore"}};
}

// The servers' stores in this build whose DSNs tools/test-servers exported.
std::vector<StoreCase> RemoteStores() {
  std::vector<StoreCase> out;
  for (const ServerDsn& server : ServerDsnsInBuild(
           {"IPCLOCK_TEST_REDIS", "IPCLOCK_TEST_POSTGRES", "IPCLOCK_TEST_POSTGRES_TABLE",
            "IPCLOCK_TEST_MYSQL", "IPCLOCK_TEST_MYSQL_TABLE", "IPCLOCK_TEST_MEMCACHED",
            "IPCLOCK_TEST_ZOOKEEPER", "IPCLOCK_TEST_ETCD"})) {
    out.push_back({server.variable, server.dsn});
  }
  if (out.empty()) SkipWithoutServerDsns({});
  return out;
}

// --- Closed standard streams -----------------------------------------------------------

// `ipclock run --verbose` on `dsn` with `redirection` (e.g. "2>&-") applied
// by the shell, then a plain run: both succeed, so the first wrote nothing
// into a lock's file, segment, registry or socket.
void RunWithClosed(const StoreCase& store, const std::string& redirection) {
  const std::string key = UniqueResource("stdio");
  const std::string what = absl::StrCat(store.name, " with ", redirection);
  CliResult r = RunProgram({"/bin/sh", "-c",
                            absl::StrCat("exec \"$0\" run --verbose --store \"$1\" --key \"$2\" "
                                         "-- true ",
                                         redirection),
                            Cli(), store.dsn, key});
  if (r.code != 0) {
    fail_msg("%s: exit %d; stdout: %s stderr: %s", what.c_str(), r.code, r.out.c_str(),
             r.err.c_str());
  }
  r = RunCli({"run", "--store", store.dsn, "--key", key, "--", "true"});
  if (r.code != 0) {
    fail_msg("%s, then a plain run: exit %d; stderr: %s", what.c_str(), r.code, r.err.c_str());
  }
}

const char* const kClosedStreams[] = {"2>&-", "1>&-", "0<&-", "0<&- 1>&- 2>&-"};

void test_closed_stdio_local_stores(void** state) {
  (void)state;
  for (const StoreCase& store : LocalStores()) {
    for (const char* redirection : kClosedStreams) RunWithClosed(store, redirection);
  }
}

void test_closed_stdio_remote_stores(void** state) {
  (void)state;
  const std::vector<StoreCase> stores = RemoteStores();
  for (const StoreCase& store : stores) {
    for (const char* redirection : kClosedStreams) RunWithClosed(store, redirection);
  }
}

// --- Sockets whose reader has stopped ------------------------------------------------

// A datagram socket bound at `address` (a path, or "@name" for an abstract
// one) that nobody reads, its queue filled to the brim.
class StuckSocket {
 public:
  explicit StuckSocket(const std::string& address) : socket_(address) {
    const int writer = socket_.ConnectWriter();
    int sent = 0;
    while (sent < 100000 && send(writer, "X=1", 3, MSG_DONTWAIT) == 3) ++sent;
    if (errno != EAGAIN) fail_msg("filling %s: %s", address.c_str(), strerror(errno));
    close(writer);
  }

 private:
  BoundDatagramSocket socket_;
};

void test_full_notify_socket_does_not_hang(void** state) {
  (void)state;
  const std::string address = absl::StrCat("@ipclock-test-stuck-", getpid());
  StuckSocket manager(address);
  const std::string store = FreshStore();
  // STATUS= alone, then READY=1 as well: every message is dropped, and the
  // run ends with COMMAND's status (WaitChild fails the test after 30 s).
  for (const bool ready : {false, true}) {
    std::vector<std::string> args = {"run", "--store", store, "--key", "stuck"};
    if (ready) args.push_back("--notify-ready");
    args.insert(args.end(), {"--", "sh", "-c", "exit 3"});
    // In the child's environment only: the test's later runs must not
    // inherit it if this one fails.
    setenv("NOTIFY_SOCKET", address.c_str(), 1);
    const double start = NowSeconds();
    const pid_t pid = Spawn(WithCli(args));
    unsetenv("NOTIFY_SOCKET");
    assert_int_equal(WaitChild(pid), 3);
    print_message("full notify socket%s: the run took %.3f s\n", ready ? ", --notify-ready" : "",
                  NowSeconds() - start);
  }
}

void test_full_journal_socket_does_not_hang(void** state) {
  (void)state;
  const std::string path = ScratchFile("journal.sock");
  StuckSocket journal(path);
  const std::string err = ScratchFile("stderr");
  WriteFile(err, "");
  struct stat st;
  if (stat(err.c_str(), &st) != 0) fail_msg("stat %s: %s", err.c_str(), strerror(errno));
  setenv("JOURNAL_STREAM", absl::StrCat(st.st_dev, ":", st.st_ino).c_str(), 1);
  setenv("IPCLOCK_JOURNAL_SOCKET", path.c_str(), 1);
  SpawnOptions options;
  options.stderr_path = err;
  const double start = NowSeconds();
  const pid_t pid = Spawn(WithCli({"run", "--verbose", "--store", FreshStore(), "--key", "j",
                                   "--", "sh", "-c", "exit 3"}),
                          options);
  unsetenv("JOURNAL_STREAM");
  unsetenv("IPCLOCK_JOURNAL_SOCKET");
  assert_int_equal(WaitChild(pid), 3);
  print_message("full journal socket: the run took %.3f s\n", NowSeconds() - start);
  // What the journal did not take went to stderr.
  ExpectContains(ReadFileOrEmpty(err), "acquired", "stderr in the journal's place");
}

// --- What COMMAND inherits -------------------------------------------------------------

// This test binary, run as COMMAND with --list-fds: prints "FD TARGET" for
// each descriptor it has.
int ListDescriptors() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 1;
  const int own = dirfd(dir);
  while (const struct dirent* entry = readdir(dir)) {
    int fd = -1;
    if (!absl::SimpleAtoi(entry->d_name, &fd) || fd == own) continue;
    char target[512];
    const ssize_t n = readlinkat(own, entry->d_name, target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = '\0';
    printf("%d %s\n", fd, target);
  }
  closedir(dir);
  return 0;
}

std::string SelfPath() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) fail_msg("readlink /proc/self/exe: %s", strerror(errno));
  return std::string(path, static_cast<size_t>(n));
}

std::map<int, std::string> ParseDescriptors(const std::string& what, const CliResult& r) {
  if (r.code != 0) fail_msg("%s: exit %d; stderr: %s", what.c_str(), r.code, r.err.c_str());
  std::map<int, std::string> out;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    const size_t space = line.find(' ');
    int fd = -1;
    if (space == absl::string_view::npos || !absl::SimpleAtoi(line.substr(0, space), &fd)) {
      fail_msg("%s: bad line \"%s\"", what.c_str(), std::string(line).c_str());
    }
    out[fd] = std::string(line.substr(space + 1));
  }
  return out;
}

// What the lister inherits from the shell alone: the standard streams, 7
// (/dev/null), and whatever the test itself was started with.
const std::map<int, std::string>& Baseline() {
  static const std::map<int, std::string>* baseline = new std::map<int, std::string>(
      ParseDescriptors("the lister alone",
                       RunProgram({"/bin/sh", "-c", "exec \"$0\" --list-fds 7</dev/null",
                                   SelfPath()})));
  return *baseline;
}

// COMMAND's descriptors ("FD" -> target) under `ipclock run ARGS`, ipclock
// being given descriptor 7 (/dev/null) besides its standard streams.
std::map<int, std::string> CommandDescriptors(const StoreCase& store,
                                              const std::vector<std::string>& args) {
  const std::string key = UniqueResource("fds");
  return ParseDescriptors(
      store.name,
      RunProgram({"/bin/sh", "-c",
                  absl::StrCat("exec \"$0\" run --store \"$1\" --key \"$2\" ",
                               absl::StrJoin(args, " "), " -- \"$3\" --list-fds 7</dev/null"),
                  Cli(), store.dsn, key, SelfPath()}));
}

std::string Shown(const std::map<int, std::string>& fds) {
  std::string out;
  for (const auto& [fd, target] : fds) absl::StrAppend(&out, fd, " -> ", target, "; ");
  return out;
}

// COMMAND has what the lister has without ipclock (Baseline()), and, where
// `lock_file_in` is not empty, one descriptor more: a file under that dir
// (the flock lock's).
void ExpectInherited(const StoreCase& store, const std::vector<std::string>& args,
                     const std::string& lock_file_in = "") {
  std::map<int, std::string> fds = CommandDescriptors(store, args);
  const std::string shown = Shown(fds);
  for (const auto& [fd, target] : Baseline()) {
    if (fds.erase(fd) != 1) {
      fail_msg("%s: COMMAND lacks descriptor %d: %s", store.name.c_str(), fd, shown.c_str());
    }
  }
  if (!lock_file_in.empty()) {
    if (fds.size() != 1 || !absl::StartsWith(fds.begin()->second, lock_file_in + "/")) {
      fail_msg("%s: COMMAND should have the lock file in %s besides 0-2 and 7: %s",
               store.name.c_str(), lock_file_in.c_str(), shown.c_str());
    }
    return;
  }
  if (!fds.empty()) {
    fail_msg("%s %s: COMMAND inherited ipclock's descriptors: %s", store.name.c_str(),
             absl::StrJoin(args, " ").c_str(), shown.c_str());
  }
}

void test_command_descriptors_local_stores(void** state) {
  (void)state;
  for (const StoreCase& store : LocalStores()) {
    if (store.name != "flock") {
      ExpectInherited(store, {});
      continue;
    }
    // flock: the lock's descriptor, as flock(1) passes it; with -o, not.
    const std::string dir = store.dsn.substr(strlen("flock://"));
    ExpectInherited(store, {}, dir);
    ExpectInherited(store, {"-o"});
    ExpectInherited(store, {"--close"});
  }
}

void test_command_descriptors_remote_stores(void** state) {
  (void)state;
  const std::vector<StoreCase> stores = RemoteStores();
  for (const StoreCase& store : stores) ExpectInherited(store, {});
}

}  // namespace
}  // namespace ipclock_test

int main(int argc, char** argv) {
  using namespace ipclock_test;
  if (argc > 1 && strcmp(argv[1], "--list-fds") == 0) return ListDescriptors();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_closed_stdio_local_stores),
      cmocka_unit_test(test_closed_stdio_remote_stores),
      cmocka_unit_test(test_full_notify_socket_does_not_hang),
      cmocka_unit_test(test_full_journal_socket_does_not_hang),
      cmocka_unit_test(test_command_descriptors_local_stores),
      cmocka_unit_test(test_command_descriptors_remote_stores),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
