// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A server of a test's own, started through one of the scripts in
// tools/test-servers/ (etcd-server, zookeeper-server), which all answer
// the same verbs: `available`, `start DIR ARGS...`, `wait DIR PORT
// SECONDS` and `stop DIR`, and leave the server's pid in DIR. The test may
// freeze it (SIGSTOP: it answers nothing, and its peers hear nothing) and
// thaw it; it is stopped when the object goes, and by StopOwnServers() when
// a failed test skips the destructor. Also: what a store says of a port of
// that range where nothing listens.

#ifndef IPCLOCK_TESTS_SCRIPTED_SERVER_H_
#define IPCLOCK_TESTS_SCRIPTED_SERVER_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace ipclock_test {

struct ScriptedServerSpec {
  const char* script;    // its name in tools/test-servers/
  const char* name;      // the server's name in messages
  const char* pid_file;  // the file in its dir that holds its pid
  const char* missing;   // why the test skips when `available` says no
  int first_port;        // tries $IPCLOCK_TEST_PORT_BASE+first_port..98
  int ports;             // 1, or 2 where it also needs a peer port
  // Put before the ports on `start`'s command line (etcd's member name).
  std::vector<std::string> start_args;
  // Starts tried, each on the next free port: a server that exits at
  // start-up logs nothing that says why (ZooKeeper's jars log nowhere).
  int attempts;
  int wait_seconds;  // how long `wait` may take for it to serve
};

class ScriptedServer {
 public:
  explicit ScriptedServer(ScriptedServerSpec spec) : spec_(std::move(spec)) {}
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  // Starts it and waits until it serves: nullptr, or why the test skips
  // (what is missing from the machine, no free port). A server that
  // started and never serves fails the test.
  const char* Start();

  pid_t pid() const;
  int port() const { return port_; }
  void Freeze();
  void Thaw();

 private:
  std::string Script() const;

  ScriptedServerSpec spec_;
  std::string dir_;
  int port_ = 0;
  bool started_ = false;
};

// Opens `scheme_and_host` + ":PORT" + `rest`, with PORT a port of the
// test's own range where nothing listens: the store must be Unavailable,
// naming the port. Returns the seconds it took.
double ExpectUnreachable(const std::string& scheme_and_host, const std::string& rest);

#define START_OWN(own) ::ipclock_test::SkipIf((own).Start())

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_SCRIPTED_SERVER_H_
