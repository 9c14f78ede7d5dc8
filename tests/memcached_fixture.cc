// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "memcached_fixture.h"

#include <signal.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "own_server.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

// A memcached command in the text protocol, raw; the reply up to its end.
std::string Command(int port, const std::string& command, double timeout_sec) {
  return RawExchange(port, command, [](const std::string& r) {
    for (const char* end : {"END\r\n", "STORED\r\n", "DELETED\r\n", "NOT_FOUND\r\n", "OK\r\n",
                            "EXISTS\r\n", "ERROR\r\n", "EN\r\n", "HD\r\n"}) {
      if (absl::EndsWith(r, end)) return true;
    }
    // A meta get with a value: "VA <size> <flags>\r\n<data>\r\n".
    if (absl::StartsWith(r, "VA ")) {
      size_t eol = r.find("\r\n");
      size_t size = 0;
      std::vector<absl::string_view> head = absl::StrSplit(r.substr(3, eol - 3), ' ');
      return eol != std::string::npos && absl::SimpleAtoi(head[0], &size) &&
             r.size() >= eol + 2 + size + 2;
    }
    return false;
  }, timeout_sec);
}

Raw MetaGet(int port, const std::string& key) {
  std::string r = Command(port, absl::StrCat("mg ", key, " v t f\r\n"));
  Raw raw;
  if (!absl::StartsWith(r, "VA ")) return raw;
  raw.present = true;
  const size_t eol = r.find("\r\n");
  for (absl::string_view field : absl::StrSplit(r.substr(3, eol - 3), ' ')) {
    if (absl::ConsumePrefix(&field, "t")) (void)absl::SimpleAtoi(field, &raw.ttl);
    if (absl::ConsumePrefix(&field, "f")) (void)absl::SimpleAtoi(field, &raw.flags);
  }
  raw.value = r.substr(eol + 2, r.size() - eol - 4);
  return raw;
}

const char* OwnMemcached::Start(const std::vector<std::string>& extra) {
  if (FindInPath("memcached").empty()) return "memcached is not installed";
  if (dir_.empty()) dir_ = MakeTempDir();
  if (port_ == 0) port_ = FreeOwnPort(92);
  if (port_ == 0) return "no free port in $IPCLOCK_TEST_PORT_BASE+92..98";
  extra_ = extra;
  for (std::string& e : extra_) {
    if (e == "{socket}") e = socket_path();
  }
  Launch();
  return nullptr;
}

void OwnMemcached::Stop() {
  KillOwnServer(&pid_);
}

void OwnMemcached::Launch() {
  std::vector<std::string> argv = {"memcached", "-l", "127.0.0.1", "-p", absl::StrCat(port_),
                                   "-U", "0"};
  if (geteuid() == 0) argv.insert(argv.end(), {"-u", "root"});
  argv.insert(argv.end(), extra_.begin(), extra_.end());
  // Its output to files: a server that outlived a crashed test must not
  // hold the test's stdout open (the runner waits for it).
  SpawnOptions options;
  options.stdout_path = absl::StrCat(dir_, "/memcached.out");
  options.stderr_path = absl::StrCat(dir_, "/memcached.err");
  pid_ = Spawn(argv, options);
  RegisterOwnServer(pid_);
  for (int i = 0; i < 200; ++i) {
    if (absl::StrContains(Command(port_, "version\r\n", 0.2), "VERSION")) return;
    // A socket-only server does not listen on TCP.
    if (access(socket_path().c_str(), F_OK) == 0) return;
    usleep(20 * 1000);
  }
  fail_msg("our memcached on port %d did not start", port_);
}

}  // namespace ipclock_test
