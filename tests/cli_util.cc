// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "cli_util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ipclock_config.h"
#include "own_server.h"
#include "spawn_util.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {

std::string Cli() {
  static const std::string path = IpclockPath();
  if (path.empty()) fail_msg("ipclock binary not found (IPCLOCK_BUILD_ROOT unset?)");
  return path;
}

namespace {

// A scratch dir for captured output; each test makes its own lock dirs.
const std::string& ScratchDir() {
  static const std::string dir = MakeTempDir();
  return dir;
}

}  // namespace

std::string ScratchFile(absl::string_view tag) {
  static int counter = 0;
  return absl::StrCat(ScratchDir(), "/", tag, "-", counter++);
}

std::string FreshStore(std::string* dir_out) {
  std::string dir = MakeTempDir();
  if (dir_out != nullptr) *dir_out = dir;
  return absl::StrCat("flock://", dir);
}

std::vector<std::string> WithCli(std::vector<std::string> args) {
  args.insert(args.begin(), Cli());
  return args;
}

std::vector<std::string> UnderStrace(const std::string& syscalls, const std::string& trace,
                                     std::vector<std::string> argv) {
  if (access("/usr/bin/strace", X_OK) != 0) {
    SkipIf("strace is not installed (apt-get install strace)", UnderCi());
  }
  const char* asan = getenv("ASAN_OPTIONS");
  std::vector<std::string> out = {
      "strace", "-f", "-qq", "-e", absl::StrCat("trace=", syscalls), "-o", trace, "-E",
      absl::StrCat("ASAN_OPTIONS=", asan != nullptr ? asan : "", asan != nullptr ? ":" : "",
                   "detect_leaks=0")};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

CliResult RunProgram(std::vector<std::string> argv, double timeout) {
  SpawnOptions options;
  options.stdout_path = ScratchFile("out");
  options.stderr_path = ScratchFile("err");
  CliResult r;
  const double start = NowSeconds();
  pid_t pid = Spawn(argv, options);
  r.code = WaitChild(pid, timeout);
  r.seconds = NowSeconds() - start;
  r.out = ReadFileOrEmpty(options.stdout_path);
  r.err = ReadFileOrEmpty(options.stderr_path);
  return r;
}

CliResult RunCli(std::vector<std::string> args, double timeout) {
  return RunProgram(WithCli(std::move(args)), timeout);
}

void ExpectCode(const CliResult& r, int code, const char* what) {
  if (r.code != code) {
    fail_msg("%s: exit %d, expected %d; stderr: %s", what, r.code, code, r.err.c_str());
  }
}

void ExpectContains(const std::string& text, absl::string_view needle, const char* what) {
  if (!absl::StrContains(text, needle)) {
    fail_msg("%s: \"%s\" not found in: %s", what, std::string(needle).c_str(),
             text.c_str());
  }
}

void ExpectLacks(const std::string& text, absl::string_view needle, const char* what) {
  if (absl::StrContains(text, needle)) {
    fail_msg("%s: \"%s\" found in: %s", what, std::string(needle).c_str(), text.c_str());
  }
}

namespace {

// The command pid each holder's command wrote to its ready file.
std::map<pid_t, pid_t>& CommandPids() {
  static std::map<pid_t, pid_t>* pids = new std::map<pid_t, pid_t>();
  return *pids;
}

}  // namespace

pid_t StartHolder(const std::vector<std::string>& argv, const std::string& ready) {
  SpawnOptions options;
  // No controlling terminal, whatever the test runner has: ipclock then
  // gives COMMAND a process group of its own, the same in every run.
  options.new_session = true;
  pid_t pid = Spawn(argv, options);
  if (!WaitForFile(ready, 20)) {
    kill(-pid, SIGKILL);
    WaitChild(pid);
    fail_msg("holder %s never started its command", argv[0].c_str());
  }
  return pid;
}

pid_t StartCliHolder(std::vector<std::string> args, std::string* ready_out) {
  const std::string ready = ScratchFile("ready");
  if (ready_out != nullptr) *ready_out = ready;
  args.insert(args.end(), {"--", "sh", "-c", ReadyScript(ready, "exec sleep 60")});
  const pid_t pid = StartHolder(WithCli(std::move(args)), ready);
  int command = 0;
  if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFileOrEmpty(ready)), &command)) {
    CommandPids()[pid] = command;
  }
  return pid;
}

std::string ReadyScript(const std::string& ready, absl::string_view then) {
  return absl::StrCat("echo $$ > '", ready, ".tmp' && mv '", ready, ".tmp' '", ready, "'; ",
                      then);
}

int StopHolder(pid_t pid, int sig) {
  kill(-pid, sig);
  // COMMAND leads a process group of its own (no controlling terminal):
  // a SIGKILL to ipclock alone would leave it running.
  if (auto it = CommandPids().find(pid); it != CommandPids().end()) {
    kill(-it->second, sig);
    CommandPids().erase(it);
  }
  return WaitChild(pid);
}

// --- Servers of the test's own ---------------------------------------------------

namespace {

// A store this build left out (a disabled Meson feature): nothing to test,
// under CI too (the minimal build leaves every optional store out).
void SkipUnlessBuilt(bool built, const char* store) {
  if (built) return;
  print_message("skipped: the %s store is not in this build\n", store);
  skip();
}

void SkipWithout(const std::string& why) { SkipIf(why.c_str(), UnderCi()); }

// Whether the store that tools/test-servers' `variable` points at is built.
bool ServerStoreBuilt(absl::string_view variable) {
  const struct {
    const char* variable;
    bool built;
  } kStores[] = {
      {"IPCLOCK_TEST_REDIS", IPCLOCK_HAVE_REDIS},
      {"IPCLOCK_TEST_POSTGRES", IPCLOCK_HAVE_POSTGRES},
      {"IPCLOCK_TEST_POSTGRES_TABLE", IPCLOCK_HAVE_POSTGRES},
      {"IPCLOCK_TEST_MYSQL", IPCLOCK_HAVE_MYSQL},
      {"IPCLOCK_TEST_MYSQL_TABLE", IPCLOCK_HAVE_MYSQL},
      {"IPCLOCK_TEST_MEMCACHED", IPCLOCK_HAVE_MEMCACHED},
      {"IPCLOCK_TEST_ZOOKEEPER", IPCLOCK_HAVE_ZOOKEEPER},
      {"IPCLOCK_TEST_ETCD", IPCLOCK_HAVE_ETCD},
  };
  for (const auto& store : kStores) {
    if (variable == store.variable) return store.built;
  }
  fail_msg("no store is known for %s", std::string(variable).c_str());
  return false;
}

}  // namespace

std::vector<ServerDsn> ServerDsnsInBuild(std::vector<const char*> variables) {
  std::vector<ServerDsn> out;
  for (const char* variable : variables) {
    const char* dsn = EnvOrNull(variable);
    if (dsn != nullptr && ServerStoreBuilt(variable)) out.push_back({variable, dsn});
  }
  return out;
}

void SkipWithoutServerDsns(const std::vector<ServerDsn>& dsns) {
  if (!dsns.empty()) return;
  const bool any_built = IPCLOCK_HAVE_REDIS || IPCLOCK_HAVE_POSTGRES || IPCLOCK_HAVE_MYSQL ||
                         IPCLOCK_HAVE_MEMCACHED || IPCLOCK_HAVE_ZOOKEEPER || IPCLOCK_HAVE_ETCD;
  if (!any_built) {
    print_message("skipped: no server store is in this build\n");
    skip();
  }
  SkipIf("no server DSN is set (IPCLOCK_TEST_*; tools/dev test starts the servers)", UnderCi());
}

int OwnServer::port() {
  if (port_ == 0) {
    for (int p = TestPortBase() + first_port_offset_; p <= TestPortBase() + 98 && port_ == 0; ++p) {
      if (!Listening(p)) port_ = p;
    }
    if (port_ == 0) fail_msg("no free port in $IPCLOCK_TEST_PORT_BASE+90..98");
  }
  return port_;
}

void OwnServer::Start() {
  port();
  if (dir_.empty()) dir_ = MakeTempDir();
  Launch();
  const double until = NowSeconds() + 20;
  while (NowSeconds() < until) {
    if (Answers()) return;
    usleep(20 * 1000);
  }
  fail_msg("the test's own server on port %d did not answer within 20 s (dir %s)", port_,
           dir_.c_str());
}

OwnRedis& OwnRedis::Get() {
  static OwnRedis* server = nullptr;
  SkipUnlessBuilt(IPCLOCK_HAVE_REDIS, "redis");
  if (FindInPath("redis-server").empty() || FindInPath("redis-cli").empty()) {
    SkipWithout("redis-server and redis-cli are not installed (apt-get install redis-server)");
  }
  if (server == nullptr) server = new OwnRedis();
  return *server;
}

void OwnRedis::Launch() {
  const std::string port = absl::StrCat(port_);
  std::vector<std::string> args = {"redis-server", "--port", port, "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no", "--dir", dir_,
                                   "--logfile", dir_ + "/redis.log", "--daemonize", "no"};
  SpawnOptions options;
  options.die_with_test = true;
  const pid_t pid = Spawn(args, options);
  pid_ = pid;
}

bool OwnRedis::Answers() {
  int code = -1;
  SpawnOptions quiet;
  quiet.stdout_path = ScratchFile("redis-ping");
  quiet.stderr_path = quiet.stdout_path + ".err";
  code = WaitPlain(Spawn({"redis-cli", "-h", "127.0.0.1", "-p", absl::StrCat(port_), "ping"},
                         quiet),
                   10);
  return code == 0 && absl::StrContains(ReadFileOrEmpty(quiet.stdout_path), "PONG");
}

void OwnRedis::Stop() {
  KillOwnServer(&pid_);
}

std::string OwnRedis::dsn() { return absl::StrCat("redis://127.0.0.1:", port()); }

std::string OwnRedis::Command(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"redis-cli", "-h", "127.0.0.1", "-p", absl::StrCat(port())};
  argv.insert(argv.end(), args.begin(), args.end());
  CliResult r = RunProgram(argv, 20);
  ExpectCode(r, 0, "redis-cli");
  return std::string(absl::StripAsciiWhitespace(r.out));
}

OwnPostgres& OwnPostgres::Get() {
  static OwnPostgres* server = nullptr;
  SkipUnlessBuilt(IPCLOCK_HAVE_POSTGRES, "postgresql+advisory");
  std::string bindir;
  if (DIR* d = opendir("/usr/lib/postgresql"); d != nullptr) {
    while (struct dirent* e = readdir(d)) {
      const std::string candidate = absl::StrCat("/usr/lib/postgresql/", e->d_name, "/bin");
      if (e->d_name[0] != '.' && FileExists(candidate + "/initdb")) bindir = candidate;
    }
    closedir(d);
  }
  if (bindir.empty() || FindInPath("psql").empty()) {
    SkipWithout("no PostgreSQL server binaries or psql (apt-get install postgresql)");
  }
  if (server == nullptr) {
    server = new OwnPostgres();
    server->bindir_ = bindir;
    // pg_ctl leaves the server running on its own: stop it before the
    // temp dirs go (atexit handlers run in reverse order).
    atexit([] { server->Stop(); });
  }
  return *server;
}

std::vector<std::string> OwnPostgres::AsOwner(std::vector<std::string> argv) const {
  // initdb refuses to run as root: the cluster then belongs to `postgres`,
  // whose programs run from / (they go back to the dir they started in,
  // which `postgres` may not enter: root's home).
  if (geteuid() == 0) {
    argv.insert(argv.begin(), {"env", "-C", "/", "runuser", "-u", "postgres", "--"});
  }
  return argv;
}

void OwnPostgres::Launch() {
  const std::string data = dir_ + "/data";
  if (!FileExists(data)) {
    if (geteuid() == 0) {
      ExpectCode(RunProgram({"chown", "postgres:", dir_}), 0, "chown the cluster dir");
    }
    CliResult r = RunProgram(AsOwner({bindir_ + "/initdb", "-D", data, "-U", "ipclock",
                                      "--auth=trust", "-E", "UTF8", "--no-locale"}),
                             120);
    ExpectCode(r, 0, "initdb");
  }
  CliResult r = RunProgram(
      AsOwner({bindir_ + "/pg_ctl", "-D", data, "-l", dir_ + "/server.log", "-w", "-t", "60",
               "-o",
               absl::StrCat("-c listen_addresses=127.0.0.1 -p ", port_, " -k ", dir_,
                            " -c fsync=off"),
               "start"}),
      90);
  ExpectCode(r, 0, "pg_ctl start");
  running_ = true;
}

bool OwnPostgres::Answers() {
  return RunProgram({bindir_ + "/pg_isready", "-q", "-h", "127.0.0.1", "-p",
                     absl::StrCat(port_)},
                    10)
             .code == 0;
}

void OwnPostgres::Stop() {
  if (!running_) return;
  RunProgram(AsOwner({bindir_ + "/pg_ctl", "-D", dir_ + "/data", "-m", "immediate", "-w",
                      "stop"}),
             60);
  running_ = false;
}

std::string OwnPostgres::dsn() {
  return absl::StrCat("postgresql+advisory://ipclock@127.0.0.1:", port(), "/postgres");
}

std::string OwnPostgres::Sql(const std::string& sql) {
  CliResult r = RunProgram({"psql", "-X", "-h", "127.0.0.1", "-p", absl::StrCat(port()), "-U",
                            "ipclock", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-Atc", sql},
                           30);
  ExpectCode(r, 0, "psql");
  return std::string(absl::StripAsciiWhitespace(r.out));
}

}  // namespace ipclock_test
