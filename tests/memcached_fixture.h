// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What memcached_store_test.cc uses to look at a memcached from outside:
// raw commands of the text protocol, and a server of its own.

#ifndef IPCLOCK_TESTS_MEMCACHED_FIXTURE_H_
#define IPCLOCK_TESTS_MEMCACHED_FIXTURE_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ipclock_test {

// A memcached command in the text protocol, raw; the reply up to its end.
std::string Command(int port, const std::string& command, double timeout_sec = 5);

// The key's value and remaining TTL through a meta get ("mg KEY v t f").
struct Raw {
  bool present = false;
  std::string value;
  long ttl = -2;
  long flags = -1;
};
Raw MetaGet(int port, const std::string& key);

// A memcached of the test's own, on loopback at the first free port of
// $IPCLOCK_TEST_PORT_BASE+92..98, to stop, starve or flush. It dies with
// the test process.
class OwnMemcached {
 public:
  ~OwnMemcached() { Stop(); }

  // Why it cannot start, or nullptr. `extra` are more memcached flags;
  // "{socket}" stands for socket_path().
  const char* Start(const std::vector<std::string>& extra = {});
  void Stop();
  void Restart() {
    Stop();
    Launch();
  }
  int port() const { return port_; }
  std::string socket_path() const { return absl::StrCat(dir_, "/memcached.sock"); }
  std::string dsn() const { return absl::StrCat("memcached://127.0.0.1:", port_); }

 private:
  void Launch();
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::vector<std::string> extra_;
};

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_MEMCACHED_FIXTURE_H_
