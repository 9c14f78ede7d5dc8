// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "scripted_server.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ipclock/store_factory.h"
#include "own_server.h"
#include "peer_process.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

std::string ScriptedServer::Script() const {
  const char* root = getenv("IPCLOCK_SOURCE_ROOT");
  return absl::StrCat(root != nullptr ? root : ".", "/tools/test-servers/", spec_.script);
}

ScriptedServer::~ScriptedServer() {
  if (!started_) return;
  Thaw();
  int code = 0;
  RunForOutput({Script(), "stop", dir_}, &code);
}

const char* ScriptedServer::Start() {
  int code = 0;
  RunForOutput({Script(), "available"}, &code);
  if (code != 0) return spec_.missing;
  static std::string no_port;
  no_port = absl::StrCat("no free port", spec_.ports > 1 ? "s" : "",
                         " in $IPCLOCK_TEST_PORT_BASE+", spec_.first_port, "..98");
  int from = spec_.first_port;
  for (int attempt = 0; attempt < spec_.attempts; ++attempt) {
    std::vector<std::string> argv = {Script(), "start"};
    port_ = FreeOwnPort(from);
    if (port_ == 0) return no_port.c_str();
    from = port_ - TestPortBase() + 1;
    std::vector<std::string> ports = {absl::StrCat(port_)};
    for (int i = 1; i < spec_.ports; ++i) {
      const int more = FreeOwnPort(from);
      if (more == 0) return no_port.c_str();
      ports.push_back(absl::StrCat(more));
    }
    dir_ = MakeTempDir();
    argv.push_back(dir_);
    argv.insert(argv.end(), spec_.start_args.begin(), spec_.start_args.end());
    argv.insert(argv.end(), ports.begin(), ports.end());
    RunForOutput(argv, &code);
    if (code != 0) return "the server did not start";
    started_ = true;
    RegisterOwnServer(pid());
    RunForOutput({Script(), "wait", dir_, absl::StrCat(port_), absl::StrCat(spec_.wait_seconds)},
                 &code);
    if (code == 0) return nullptr;
    RunForOutput({Script(), "stop", dir_}, &code);
    started_ = false;
  }
  fail_msg("our %s on port %d does not serve", spec_.name, port_);
  return nullptr;
}

double ExpectUnreachable(const std::string& scheme_and_host, const std::string& rest) {
  const int free_port = FreeOwnPort(90);
  if (free_port == 0) fail_msg("no free port in $IPCLOCK_TEST_PORT_BASE+90..98");
  const double t0 = NowSeconds();
  absl::StatusOr<std::shared_ptr<ipclock::Store>> down =
      ipclock::StoreFromDsn(absl::StrCat(scheme_and_host, ":", free_port, rest));
  ASSERT_CODE(down, absl::StatusCode::kUnavailable);
  assert_non_null(strstr(down.status().message().data(), absl::StrCat(free_port).c_str()));
  return NowSeconds() - t0;
}

pid_t ScriptedServer::pid() const {
  int pid = 0;
  (void)absl::SimpleAtoi(
      absl::StripAsciiWhitespace(ReadFileOrEmpty(absl::StrCat(dir_, "/", spec_.pid_file))), &pid);
  return pid;
}

void ScriptedServer::Freeze() { FreezeProcess(pid()); }

void ScriptedServer::Thaw() {
  if (pid() > 0) kill(pid(), SIGCONT);
}

}  // namespace ipclock_test
